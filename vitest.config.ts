import { readdirSync } from "node:fs"
import { defineConfig } from "vitest/config"

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

export default defineConfig({
  test: {
    projects: process.env["DATABASE_URL"] === undefined ? ["packages/*", "apps/*", "examples/*"] : workspaces.filter((dir) => !storeIndependent.has(dir)),
    // Most of the suite's time is spent waiting on other processes (gateways and servers starting and stopping,
    // sandboxes, PGlite): the stand-in engine's file uses 8 s of CPU in 100 s. Vitest's default, one worker less
    // than the cores, runs one file at a time on 2 cores; files run side by side instead (every test reserves its
    // own ports, directories and databases, so they do not meet). VITEST_MAX_WORKERS (or --maxWorkers) overrides it.
    maxWorkers: 4,
    // A process per file: tests set environment variables, spawn and signal children, and hold port reservations
    // until their process exits.
    pool: "forks"
  }
})
