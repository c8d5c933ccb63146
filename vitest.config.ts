import { readdirSync } from "node:fs"
import { defineConfig } from "vitest/config"
import { common, gatewayFiles, workers } from "./vitest.shared.ts"

/**
 * Projects whose tests never open a database (engines, sandboxes, content stores, auth, the domain model, the
 * in-memory event store): CI's second pass, the same suite on PostgreSQL (DATABASE_URL set), has nothing to add
 * there and skips them. Within the other projects, tests that do not depend on the store skip themselves in that
 * pass with `embeddedStorePass` (apps/server-node/src/testing/ServerProcess.ts).
 */
const storeIndependent = new Set([
  "packages/agent-engine",
  "packages/agent-engine-openclaw",
  "packages/app-proxy",
  "packages/application",
  "packages/auth",
  "packages/content-store",
  "packages/content-store-helia",
  "packages/content-store-kubo",
  "packages/dns",
  "packages/domain",
  "packages/event-store",
  "packages/signatures",
  "packages/skill-hub",
  "packages/templates"
])

const workspaces = ["packages", "apps", "examples"].flatMap((dir) =>
  readdirSync(dir, { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => `${dir}/${entry.name}`)
)

/** The workspaces this pass tests: all of them, or on PostgreSQL those whose tests can open a database. */
const tested = process.env["DATABASE_URL"] === undefined ? workspaces : workspaces.filter((dir) => !storeIndependent.has(dir))

export default defineConfig({
  test: {
    projects: [
      ...tested,
      // Each package's files run as many side by side as there are cores (vitest.shared.ts; every test reserves its
      // own ports, directories and databases, so they do not meet). The files that start real OpenClaw gateways
      // (~1 GB and 10-30 s of CPU each) run in this project after all the rest: beside other files on two cores a
      // gateway was left unready after its minute and a half, while two of them side by side and nothing else took
      // 10 min for all ten files against 18 min one at a time, each file 0.8-1.1x its time alone.
      {
        test: {
          ...common,
          name: "real-gateways",
          include: tested.map((dir) => `${dir}/${gatewayFiles}`),
          // After the rest (group 0), one file per core unless VITEST_GATEWAY_WORKERS says otherwise.
          sequence: { groupOrder: 1 },
          maxWorkers: workers("VITEST_GATEWAY_WORKERS")
        }
      }
    ]
  }
})
