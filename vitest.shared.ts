import { defineConfig } from "vitest/config"

// Settings every package's tests share. PGlite's first start runs initdb (several seconds), so hooks get room.
export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000
  }
})
