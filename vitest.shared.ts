import { availableParallelism } from "node:os"
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

/** How many files a group runs side by side: one per core, unless the environment variable `variable` says. */
export const workers = (variable: string) => Number(process.env[variable] ?? availableParallelism())

/**
 * The files that start real OpenClaw gateways (with ENGINE_IT=openclaw) or install an engine: vitest.config.ts runs
 * them in a project of their own, after the rest.
 */
export const gatewayFiles = "test/**/*.int.test.ts"

/** Each package's project: its tests but those on real gateways, as many files side by side as there are cores. */
export default defineConfig({
  test: {
    ...common,
    include: ["test/**/*.test.ts"],
    exclude: [...configDefaults.exclude, gatewayFiles],
    // Set here, for every project: Vitest 5 gives each project its own `maxWorkers` (the root's is not inherited;
    // the default, one less than the cores, is one file at a time on two). One per core, not more: the files'
    // servers, PGlite and sandboxes keep the cores busy, and four files on two cores made the embedded pass slower
    // (44 min against 29 one at a time) and left servers unready.
    maxWorkers: workers("VITEST_MAX_WORKERS")
  }
})
