import { configDefaults, defineConfig } from "vitest/config"

/** What every test shares, whichever project runs it. PGlite's first start runs initdb (several seconds), so hooks get room. */
export const common = {
  testTimeout: 60_000,
  hookTimeout: 120_000,
  // Servers the tests start run from the sources, and build no bundle (apps/server-node/src/Bundle.ts);
  // `CAIRN_BUNDLE=on npx vitest run …` runs them from the bundle instead.
  env: { CAIRN_BUNDLE: process.env["CAIRN_BUNDLE"] ?? "off" },
  // A process per file: tests set environment variables, spawn and signal children, and hold port reservations
  // until their process exits.
  pool: "forks" as const
}

/** The files on real OpenClaw gateways: vitest.config.ts runs them in a project of their own, one at a time. */
export const gatewayFiles = "test/**/*.int.test.ts"

/** Each package's project: its tests but those on real gateways, four files side by side. */
export default defineConfig({
  test: {
    ...common,
    include: ["test/**/*.test.ts"],
    exclude: [...configDefaults.exclude, gatewayFiles],
    // Set here, for every project: Vitest 5 gives each project its own `maxWorkers` (the root's is not inherited;
    // the default, one less than the cores, is one file at a time here).
    maxWorkers: Number(process.env["VITEST_MAX_WORKERS"] ?? 4)
  }
})
