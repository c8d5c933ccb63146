import { readdirSync, readFileSync } from "node:fs"
import { defineConfig } from "vitest/config"
import { LongestFirst } from "./vitest.sequencer.ts"
import { common, gatewayFiles, workers } from "./vitest.shared.ts"

/**
 * Test tiers. One rule puts every test file in one tier, by its package (its Vitest project) and its name:
 *
 * - `engine`: every `*.int.test.ts` file, whatever its package: the files that start real OpenClaw gateways (with
 *   ENGINE_IT=openclaw), install an engine or run OpenClaw's skill installer. They form the `real-gateways` project.
 * - `unit`: every other test file of a package in `unitPackages`. These need no database (no PGlite, no PostgreSQL),
 *   no server process, no sandbox and no real engine: memory, temporary directories and loopback sockets of the
 *   test's own process only, and they change no process state (environment, working directory): their files share
 *   worker processes. The whole tier takes well under a minute.
 * - `int`: every other test file of every other package: HTTP on PGlite or PostgreSQL, servers, the PGlite event
 *   store, sandboxes, gateway stand-ins, Kubo's.
 *
 * `CAIRN_TEST_TIER` (set by `npm run test:unit`, `test:int`, `test:engine`) runs one tier; unset (`npm test`),
 * all three. A test that needs more than its package's tier gives must go to a package of the tier it needs, or be
 * named `*.int.test.ts` when it needs what the engine tier has.
 */
const unitPackages = new Set([
  "packages/agent-engine",
  "packages/app-proxy",
  "packages/application",
  "packages/auth",
  "packages/content-store",
  "packages/content-store-helia",
  "packages/dns",
  "packages/domain",
  "packages/event-store",
  "packages/signatures",
  "packages/skill-hub",
  "packages/templates",
  "examples/verify-audit-export"
])

const tiers = ["unit", "int", "engine"] as const
const tier = process.env["CAIRN_TEST_TIER"] || undefined
if (tier !== undefined && !(tiers as ReadonlyArray<string>).includes(tier)) {
  throw new Error(`CAIRN_TEST_TIER=${tier}: expected one of ${tiers.join(", ")}, or unset for every tier`)
}

/**
 * Projects whose tests never open a database (engines, sandboxes, content stores, auth, the domain model, the
 * in-memory event store): CI's second pass, the same suite on PostgreSQL (DATABASE_URL set), has nothing to add
 * there and skips them. Within the other projects, tests that do not depend on the store skip themselves in that
 * pass with `embeddedStorePass` (apps/server-node/src/testing/ServerProcess.ts). The unit tier alone
 * (`npm run test:unit`) runs whether DATABASE_URL is set or not: none of it opens a database.
 */
const storeIndependent = new Set([
  ...unitPackages,
  "packages/agent-engine-openclaw",
  "packages/content-store-kubo"
])

const workspaces = ["packages", "apps", "examples"].flatMap((dir) =>
  readdirSync(dir, { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => `${dir}/${entry.name}`)
)

/** The workspaces this pass tests: all of them, or on PostgreSQL those whose tests can open a database. */
const tested = process.env["DATABASE_URL"] === undefined || tier === "unit"
  ? workspaces
  : workspaces.filter((dir) => !storeIndependent.has(dir))

/**
 * A package's own project (its files but the `*.int.test.ts`): its vitest.config.ts. A unit package's files share
 * their worker processes (`isolate: false`): they touch no process state (environment, working directory, ports),
 * and sharing spares each file a process and another load of Effect (the tier took 42 s of CPU instead of 47 s,
 * 55 s instead of 63 s of wall time on a loaded 2-core machine).
 */
const packageProject = (dir: string) =>
  unitPackages.has(dir)
    ? { extends: `./${dir}/vitest.config.ts`, root: dir, test: { name: packageName(dir), isolate: false } }
    : dir
const packageName = (dir: string): string => JSON.parse(readFileSync(`${dir}/package.json`, "utf8")).name

/** The packages' projects in the tier asked for. */
const packageProjects = tested.filter((dir) => tier === undefined || tier === (unitPackages.has(dir) ? "unit" : "int"))

export default defineConfig({
  // Vitest keeps each file's last duration here (results.json), and starts the longest files first by it
  // (vitest.sequencer.ts). `.ci/run` points VITEST_CACHE_DIR outside the clone, so that the next run has them too.
  ...(process.env["VITEST_CACHE_DIR"] ? { cacheDir: process.env["VITEST_CACHE_DIR"] } : {}),
  test: {
    sequence: { sequencer: LongestFirst },
    projects: [
      ...packageProjects.map(packageProject),
      // Each package's files run as many side by side as there are cores (vitest.shared.ts; every test reserves its
      // own ports, directories and databases, so they do not meet). The files that start real OpenClaw gateways
      // (~1 GB and 10-30 s of CPU each) run in this project after all the rest: beside other files on two cores a
      // gateway was left unready after its minute and a half, while two of them side by side and nothing else took
      // 10 min for all ten files against 18 min one at a time, each file 0.8-1.1x its time alone.
      ...(tier === undefined || tier === "engine"
        ? [{
          test: {
            ...common,
            name: "real-gateways",
            include: tested.map((dir) => `${dir}/${gatewayFiles}`),
            // After the rest (group 0), one file per core unless VITEST_GATEWAY_WORKERS says otherwise.
            sequence: { groupOrder: 1 },
            maxWorkers: workers("VITEST_GATEWAY_WORKERS")
          }
        }]
        : [])
    ]
  }
})
