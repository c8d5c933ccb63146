import { PgDatabase } from "@cairn/event-store-pg"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { SqlClient } from "effect/sql"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as PgliteSettings from "../src/PgliteSettings.ts"
import * as PgliteTemplate from "../src/PgliteTemplate.ts"
import * as PgliteWorker from "../src/PgliteWorker.ts"

const withEnv = async <A>(value: string | undefined, f: () => Promise<A>): Promise<A> => {
  const before = process.env["PGLITE_SHARED_BUFFERS"]
  if (value === undefined) delete process.env["PGLITE_SHARED_BUFFERS"]
  else process.env["PGLITE_SHARED_BUFFERS"] = value
  try {
    return await f()
  } finally {
    if (before === undefined) delete process.env["PGLITE_SHARED_BUFFERS"]
    else process.env["PGLITE_SHARED_BUFFERS"] = before
  }
}

const showSharedBuffers = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const [row] = yield* sql<{ readonly shared_buffers: string }>`SHOW shared_buffers`
  return row!.shared_buffers
})

const sharedBuffersOf = (dataDir: string | undefined) =>
  Effect.runPromise(showSharedBuffers.pipe(Effect.provide(PgDatabase.layerPglite(dataDir)), Effect.scoped))

describe("PgliteSettings", () => {
  it("starts the embedded database with 32MB of shared buffers, PGLITE_SHARED_BUFFERS' size when set", async () => {
    assert.strictEqual(await withEnv(undefined, () => sharedBuffersOf(undefined)), "32MB")
    assert.strictEqual(await withEnv("48MB", () => sharedBuffersOf(undefined)), "48MB")
  }, 60_000)

  it("keeps PGlite's own start parameters before Cairn's", () => {
    assert.deepStrictEqual(PgliteSettings.startParams(["--single", "-c", "a=b"]).slice(0, 3), ["--single", "-c", "a=b"])
  })

  it("refuses a size Postgres would not take, saying what it wants", async () => {
    for (const bad of ["lots", "32", "0MB", "32 MB", "-1MB"]) {
      const exit = await withEnv(bad, () =>
        Effect.runPromiseExit(showSharedBuffers.pipe(Effect.provide(PgDatabase.layerPglite(undefined)), Effect.scoped)))
      assert.isTrue(Exit.isFailure(exit), bad)
      assert.include(String(Exit.isFailure(exit) ? exit.cause : ""), "PGLITE_SHARED_BUFFERS must be a size such as 32MB")
    }
  })

  it("gives the database a worker thread opens the same shared buffers", async () => {
    const root = mkdtempSync(join(tmpdir(), "cairn-pglite-settings-"))
    try {
      const dataDir = join(root, "pg")
      PgliteWorker.openEarly({ dataDir, templates: PgliteTemplate.defaultDirectory() })
      assert.strictEqual(await sharedBuffersOf(dataDir), "32MB")
    } finally {
      rmSync(root, { recursive: true, force: true })
    }
  }, 120_000)
})
