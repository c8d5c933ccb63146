import { ExpectedVersion } from "@cairn/event-store"
import { PgDatabase, PgEventStore } from "@cairn/event-store-pg"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as PgliteTemplate from "../src/PgliteTemplate.ts"
import * as PgliteWorker from "../src/PgliteWorker.ts"

// New databases are copies of the template the servers use too: no initdb per test.
const templates = PgliteTemplate.defaultDirectory()

const appendAndRead = (stream: string) =>
  Effect.gen(function*() {
    const store = yield* PgEventStore.make()
    yield* store.append([{ stream, expected: ExpectedVersion.Any, events: [{ type: "Opened", data: { n: 1 } }] }])
    return (yield* store.readStream(stream)).map((event) => event.type)
  })

describe("PgliteWorker", () => {
  it("opens the database in a worker thread that the layer then uses, and closes it and its lock with the layer", async () => {
    const root = mkdtempSync(join(tmpdir(), "cairn-pglite-worker-"))
    try {
      const dataDir = join(root, "pg")
      PgliteWorker.openEarly({ dataDir, templates })
      assert.isTrue(existsSync(`${dataDir}.lock`), "the lock is taken before the worker opens anything")
      const run = (stream: string) =>
        Effect.runPromise(appendAndRead(stream).pipe(Effect.provide(PgDatabase.layerPglite(dataDir)), Effect.scoped))
      assert.deepStrictEqual(await run("s-1"), ["Opened"])
      assert.isFalse(existsSync(`${dataDir}.lock`), "closed with the layer's scope")
      assert.isUndefined(PgliteWorker.claim(dataDir), "claimed once")
      // The same directory opened again on the main thread: what the worker wrote is there.
      const types = await Effect.runPromise(
        Effect.gen(function*() {
          const store = yield* PgEventStore.make()
          return (yield* store.readStream("s-1")).map((event) => event.type)
        }).pipe(Effect.provide(PgDatabase.layerPglite(dataDir)), Effect.scoped)
      )
      assert.deepStrictEqual(types, ["Opened"])
    } finally {
      rmSync(root, { recursive: true, force: true })
    }
  }, 120_000)

  it("sends requests and answers larger than the shared channel in pieces", async () => {
    const root = mkdtempSync(join(tmpdir(), "cairn-pglite-worker-"))
    try {
      const dataDir = join(root, "pg")
      // 64 bytes: the startup, every statement and every answer cross in several pieces each way; the worker polls
      // for each piece a while before it sleeps.
      PgliteWorker.openEarly({ dataDir, templates }, { channelSize: 64, spinMicros: 200 })
      const text = "x".repeat(10_000)
      const read = await Effect.runPromise(
        Effect.gen(function*() {
          const store = yield* PgEventStore.make()
          yield* store.append([{ stream: "s", expected: ExpectedVersion.Any, events: [{ type: "Big", data: { text } }] }])
          return (yield* store.readStream("s")).map((event) => event.data)
        }).pipe(Effect.provide(PgDatabase.layerPglite(dataDir)), Effect.scoped)
      )
      assert.deepStrictEqual(read, [{ text }])
      assert.isFalse(existsSync(`${dataDir}.lock`))
    } finally {
      rmSync(root, { recursive: true, force: true })
    }
  }, 120_000)

  it("takes the whole answer when its reader throws, so the next statement gets its own", async () => {
    const root = mkdtempSync(join(tmpdir(), "cairn-pglite-worker-"))
    try {
      const dataDir = join(root, "pg")
      PgliteWorker.openEarly({ dataDir, templates }, { channelSize: 16 })
      const early = PgliteWorker.claim(dataDir)!
      try {
        const backend = await early.open()
        const params = Buffer.from("user\0postgres\0database\0postgres\0\0")
        const startup = Buffer.alloc(8)
        startup.writeInt32BE(8 + params.length, 0)
        startup.writeInt32BE(196608, 4)
        await backend.run(new Uint8Array(Buffer.concat([startup, params])), () => {})
        const query = (sql: string) => {
          const text = Buffer.from(`${sql}\0`)
          const head = Buffer.alloc(5)
          head[0] = 0x51 // 'Q'
          head.writeInt32BE(4 + text.length, 1)
          return new Uint8Array(Buffer.concat([head, text]))
        }
        const error = await backend.run(query("SELECT repeat('a', 200)"), () => {
          throw new Error("reader failed")
        }).then(() => undefined, (error: Error) => error)
        assert.strictEqual(error?.message, "reader failed")
        const answer: Array<Buffer> = []
        await backend.run(query("SELECT 'second'"), (chunk) => answer.push(Buffer.from(chunk)))
        const text = Buffer.concat(answer).toString("latin1")
        assert.include(text, "second")
        assert.notInclude(text, "aaaa")
      } finally {
        await early.close()
      }
    } finally {
      rmSync(root, { recursive: true, force: true })
    }
  }, 120_000)

  it("reports a database that could not be opened, and gives its lock up", async () => {
    const root = mkdtempSync(join(tmpdir(), "cairn-pglite-worker-"))
    try {
      // The data directory is a file: PGlite cannot open it.
      const dataDir = join(root, "pg")
      writeFileSync(dataDir, "")
      PgliteWorker.openEarly({ dataDir, templates })
      const early = PgliteWorker.claim(dataDir)
      if (early === undefined) return assert.fail("the worker was not started")
      const error = await early.open().then(() => undefined, (error: Error) => error)
      assert.match(error?.message ?? "", /did not open|exited/)
      await early.close()
      assert.isFalse(existsSync(`${dataDir}.lock`))
    } finally {
      rmSync(root, { recursive: true, force: true })
    }
  }, 120_000)

  it("fails a request made after the worker ended instead of waiting for it", async () => {
    const root = mkdtempSync(join(tmpdir(), "cairn-pglite-worker-"))
    try {
      const dataDir = join(root, "pg")
      PgliteWorker.openEarly({ dataDir, templates })
      const early = PgliteWorker.claim(dataDir)!
      const backend = await early.open()
      await early.close()
      const error = await backend.run(new Uint8Array([0x53, 0, 0, 0, 4]), () => {}).then(() => undefined, (error: Error) => error)
      assert.match(error?.message ?? "", /exited/)
    } finally {
      rmSync(root, { recursive: true, force: true })
    }
  }, 120_000)

  it("starts nothing on a directory whose lock another live process holds", () => {
    const root = mkdtempSync(join(tmpdir(), "cairn-pglite-worker-"))
    try {
      const dataDir = join(root, "pg")
      // PID 1 runs, and is not this process.
      const held = JSON.stringify({ pid: 1 }) + "\n"
      writeFileSync(`${dataDir}.lock`, held)
      PgliteWorker.openEarly({ dataDir, templates })
      assert.isUndefined(PgliteWorker.claim(dataDir))
      assert.strictEqual(readFileSync(`${dataDir}.lock`, "utf8"), held)
    } finally {
      rmSync(root, { recursive: true, force: true })
    }
  })
})
