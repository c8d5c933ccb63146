import { defineConfig } from "vitest/config"

// Settings every package's tests share. PGlite's first start runs initdb (several seconds), so hooks get room.
export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Servers the tests start run from the sources, and build no bundle (apps/server-node/src/Bundle.ts);
    // `CAIRN_BUNDLE=on npx vitest run …` runs them from the bundle instead.
    env: { CAIRN_BUNDLE: process.env["CAIRN_BUNDLE"] ?? "off" }
  }
})
