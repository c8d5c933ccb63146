/**
 * One server per data directory, whatever the database: a second server on a directory in use exits 1 naming the
 * process that holds it and how to run a second node; a lock left by a server killed outright (SIGKILL), or one
 * whose pid now belongs to another process, does not block the next start. On PostgreSQL (DATABASE_URL set, as
 * the suite may run) PGlite's own lock is not there to catch it: this one is.
 */
import { afterAll, afterEach, assert, describe, it } from "@effect/vitest"
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { type ServerProcess, startServer, waitUntilServing } from "../src/testing/index.ts"

const dataDir = mkdtempSync(join(tmpdir(), "cairn-datadir-lock-"))
const env = { DATA_DIR: dataDir, ENGINE: "simulated" }
const started: Array<ServerProcess> = []

const start = async (extra: Record<string, string> = {}) => {
  const server = await startServer({ ...env, ...extra })
  started.push(server)
  return server
}

afterEach(async () => {
  for (const server of started.splice(0)) {
    if (server.child.exitCode === null && server.child.signalCode === null) {
      server.child.kill("SIGKILL")
      await server.exited
    }
  }
})

afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

describe("the data directory's lock", () => {
  it("refuses a second server on a directory in use, with the holder's pid and what to do, and exit code 1", async () => {
    const first = await start()
    await waitUntilServing(first)
    const lock = JSON.parse(readFileSync(join(dataDir, "server.lock"), "utf8")) as { pid: number }
    assert.strictEqual(lock.pid, first.child.pid)

    const second = await start()
    assert.strictEqual(await second.exited, 1, second.output())
    assert.include(second.output(), `cairn: The data directory ${dataDir} is in use by process ${first.child.pid} (another Cairn server)`)
    assert.include(second.output(), "DATA_DIR=<another directory> npm start")
    assert.notInclude(second.output(), "    at ", "an expected refusal prints no stack trace")
    // The refused server left the first one's lock alone.
    assert.strictEqual(JSON.parse(readFileSync(join(dataDir, "server.lock"), "utf8")).pid, first.child.pid)
    assert.strictEqual((await fetch(`${first.url}/readyz`)).status, 200)

    first.child.kill("SIGTERM")
    assert.strictEqual(await first.exited, 0, first.output())
    assert.isFalse(existsSync(join(dataDir, "server.lock")), "a server that stops releases the lock")
  })

  it("takes over the lock of a server killed with SIGKILL", async () => {
    const first = await start()
    await waitUntilServing(first)
    first.child.kill("SIGKILL")
    await first.exited
    assert.isTrue(existsSync(join(dataDir, "server.lock")), "a killed server leaves its lock behind")

    const again = await start()
    await waitUntilServing(again)
    assert.strictEqual((await fetch(`${again.url}/readyz`)).status, 200)
    assert.strictEqual(JSON.parse(readFileSync(join(dataDir, "server.lock"), "utf8")).pid, again.child.pid)
    again.child.kill("SIGTERM")
    assert.strictEqual(await again.exited, 0, again.output())
  })

  it.runIf(process.platform === "linux")("takes over a lock whose pid now belongs to another process", async () => {
    // This test's own process is alive, but it is not the process that wrote the lock (another start time).
    writeFileSync(join(dataDir, "server.lock"), JSON.stringify({ pid: process.pid, startTime: "1" }) + "\n")
    const server = await start()
    await waitUntilServing(server)
    assert.strictEqual(JSON.parse(readFileSync(join(dataDir, "server.lock"), "utf8")).pid, server.child.pid)
    server.child.kill("SIGTERM")
    assert.strictEqual(await server.exited, 0, server.output())
  })
})
