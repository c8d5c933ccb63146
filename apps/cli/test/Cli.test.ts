import { EventStore, ExpectedVersion } from "@cairn/event-store"
import { PgDatabase } from "@cairn/event-store-pg"
import { CairnRuntime } from "@cairn/runtime"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawnSync } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const main = fileURLToPath(new URL("../src/main.ts", import.meta.url))
const dataDir = mkdtempSync(join(tmpdir(), "cairn-cli-"))

/** Runs the CLI on the embedded database in `dataDir`, as an operator would. */
const cli = (...args: Array<string>) => {
  const { DATABASE_URL: _, ...env } = process.env
  const result = spawnSync(process.execPath, [main, ...args], { env: { ...env, DATA_DIR: dataDir }, encoding: "utf8" })
  return { code: result.status, stdout: result.stdout, stderr: result.stderr }
}

beforeAll(async () => {
  const seed = Effect.gen(function*() {
    const store = yield* EventStore
    for (const [stream, count] of [["agent-1", 3], ["agent-2", 2], ["file-9", 4]] as const) {
      yield* store.append([{ stream, expected: ExpectedVersion.NoStream, events: Array.from({ length: count }, (_, i) => ({ type: "Seeded", data: { i } })) }])
    }
  })
  await Effect.runPromise(seed.pipe(Effect.provide(CairnRuntime.layerStore(PgDatabase.layerPglite(join(dataDir, "pg")))), Effect.scoped))
}, 120_000)

afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

describe("the admin CLI", () => {
  it("rebuilds a read model from the log and prints it", () => {
    assert.include(cli("stats").stdout, "The log is empty")
    const replayed = cli("replay", "category-stats")
    assert.strictEqual(replayed.code, 0, replayed.stderr)
    assert.include(replayed.stdout, "category-stats: rebuilt from 9 events")
    const stats = cli("stats").stdout
    assert.match(stats, /^agent\t2 streams\t5 events\tlast /m)
    assert.match(stats, /^file\t1 streams\t4 events\tlast /m)
  })

  it("replays every read model when none is named, to the same result", () => {
    const before = cli("stats").stdout
    const all = cli("replay")
    assert.strictEqual(all.code, 0, all.stderr)
    assert.include(all.stdout, "category-stats: rebuilt from 9 events")
    assert.strictEqual(cli("stats").stdout, before)
  })

  it("refuses an unknown read model with a clear message and exit code 1", () => {
    const unknown = cli("replay", "nope")
    assert.strictEqual(unknown.code, 1)
    assert.include(unknown.stderr, "cairn: No projection named nope")
    assert.notInclude(unknown.stderr, "    at ")
  })
})
