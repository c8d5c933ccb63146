import { afterAll, assert, describe, it } from "@effect/vitest"
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { startServer, waitUntilServing } from "../src/testing/index.ts"

const dataDir = mkdtempSync(join(tmpdir(), "cairn-server-"))
const embedded = process.env["DATABASE_URL"] === undefined

afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

describe("the Node server", () => {
  it("serves /healthz and /readyz, and stops cleanly on SIGTERM", async () => {
    const server = await startServer({ DATA_DIR: dataDir })
    try {
      await waitUntilServing(server)
      const health = await fetch(`${server.url}/healthz`)
      assert.strictEqual(health.status, 200)
      assert.deepStrictEqual(await health.json(), { status: "ok" })
      const ready = await fetch(`${server.url}/readyz`)
      assert.strictEqual(ready.status, 200)
      assert.deepStrictEqual(await ready.json(), { status: "ready" })
      assert.strictEqual((await fetch(`${server.url}/no-such-route`)).status, 404)
    } finally {
      server.child.kill("SIGTERM")
    }
    assert.strictEqual(await server.exited, 0, server.output())
    if (embedded) assert.isFalse(existsSync(`${dataDir}/pg.lock`), "the data directory lock is released")
  })

  it.runIf(embedded)("refuses to open a data directory another server is using, and starts again after it stops", async () => {
    const first = await startServer({ DATA_DIR: dataDir })
    await waitUntilServing(first)
    const second = await startServer({ DATA_DIR: dataDir })
    assert.strictEqual(await second.exited, 1)
    assert.include(second.output(), `The data directory ${dataDir} is in use by process ${first.child.pid}`)
    assert.notInclude(second.output(), "    at ", "an expected failure prints no stack trace")
    first.child.kill("SIGINT")
    assert.strictEqual(await first.exited, 0, first.output())
    const again = await startServer({ DATA_DIR: dataDir })
    try {
      await waitUntilServing(again)
      assert.strictEqual((await fetch(`${again.url}/readyz`)).status, 200)
    } finally {
      again.child.kill("SIGTERM")
    }
    assert.strictEqual(await again.exited, 0)
  })

  it("sweeps resumable uploads abandoned for over a day and staged uploads left for over an hour when it starts, and keeps recent ones", async () => {
    const { mkdirSync, utimesSync, writeFileSync } = await import("node:fs")
    const uploads = join(dataDir, "uploads")
    mkdirSync(uploads, { recursive: true })
    const stale = "00000000-0000-4000-8000-000000000001"
    const fresh = "00000000-0000-4000-8000-000000000002"
    for (const id of [stale, fresh]) {
      writeFileSync(join(uploads, `${id}.data`), "partial")
      writeFileSync(join(uploads, `${id}.json`), "{}")
    }
    const twoDaysAgo = new Date(Date.now() - 2 * 24 * 3600 * 1000)
    for (const ext of ["data", "json"]) utimesSync(join(uploads, `${stale}.${ext}`), twoDaysAgo, twoDaysAgo)
    // A staged upload's folder a crash left over an hour ago goes too, with its leaves; a recent one stays.
    const staging = join(dataDir, "staging")
    for (const folder of ["crashed", "recent"]) {
      mkdirSync(join(staging, folder), { recursive: true })
      writeFileSync(join(staging, folder, "0"), "leaf")
    }
    const twoHoursAgo = new Date(Date.now() - 2 * 3600 * 1000)
    utimesSync(join(staging, "crashed"), twoHoursAgo, twoHoursAgo)
    const server = await startServer({ DATA_DIR: dataDir })
    try {
      await waitUntilServing(server)
      assert.isFalse(existsSync(join(uploads, `${stale}.data`)))
      assert.isFalse(existsSync(join(uploads, `${stale}.json`)))
      assert.isTrue(existsSync(join(uploads, `${fresh}.data`)))
      assert.isFalse(existsSync(join(staging, "crashed")))
      assert.isTrue(existsSync(join(staging, "recent", "0")))
    } finally {
      server.child.kill("SIGTERM")
    }
    assert.strictEqual(await server.exited, 0)
  })

  it.runIf(embedded)("takes over a lock left by a process that no longer runs", async () => {
    const { writeFileSync } = await import("node:fs")
    writeFileSync(`${dataDir}/pg.lock`, "999999999")
    const server = await startServer({ DATA_DIR: dataDir })
    try {
      await waitUntilServing(server)
    } finally {
      server.child.kill("SIGTERM")
    }
    assert.strictEqual(await server.exited, 0)
  })
})
