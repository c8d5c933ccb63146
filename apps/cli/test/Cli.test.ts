import { EventStore, ExpectedVersion } from "@cairn/event-store"
import { PgDatabase } from "@cairn/event-store-pg"
import { CairnRuntime } from "@cairn/runtime"
import { PgClient } from "@effect/sql-pg"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import * as Reactivity from "effect/reactivity/Reactivity"
import { SqlClient } from "effect/sql"
import { spawnSync } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const main = fileURLToPath(new URL("../src/main.ts", import.meta.url))
const dataDir = mkdtempSync(join(tmpdir(), "cairn-cli-"))

/**
 * The database the CLI opens: the embedded one in `dataDir`, or, when DATABASE_URL is set, a fresh database on that
 * server (created here, dropped afterwards).
 */
const server = process.env["DATABASE_URL"] || undefined
const database = `cairn_cli_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`
const databaseUrl = server === undefined ? undefined : Object.assign(new URL(server), { pathname: `/${database}` }).toString()

const onServer = (statement: string) =>
  Effect.scoped(Effect.gen(function*() {
    const client = yield* PgClient.make({ url: Redacted.make(server!), maxConnections: 1 })
    yield* client.unsafe(statement)
  })).pipe(Effect.provide(Reactivity.layer), Effect.runPromise)

const databaseLayer = () =>
  databaseUrl === undefined ? PgDatabase.layerPglite(join(dataDir, "pg")) : PgDatabase.layerPostgres(Redacted.make(databaseUrl), 1)

/** Runs SQL on the CLI's database between two CLI runs (PGlite allows one process at a time). */
const withDatabase = <A, E>(effect: Effect.Effect<A, E, EventStore | SqlClient.SqlClient>) =>
  Effect.runPromise(effect.pipe(Effect.provide(CairnRuntime.layerStore(databaseLayer()) as Layer.Layer<EventStore | SqlClient.SqlClient, unknown>), Effect.scoped))

/** Runs the CLI on that database, as an operator would. */
const cli = (...args: Array<string>) => {
  const { DATABASE_URL: _, ...env } = process.env
  const result = spawnSync(process.execPath, [main, ...args], {
    env: { ...env, DATA_DIR: dataDir, ...(databaseUrl === undefined ? {} : { DATABASE_URL: databaseUrl }) },
    encoding: "utf8"
  })
  return { code: result.status, stdout: result.stdout, stderr: result.stderr }
}

const workspaceCreated = (workspaceId: string, name: string) => ({
  type: "WorkspaceCreated",
  data: { _tag: "WorkspaceCreated", workspaceId, name, plan: "free", agentLimit: 1, internal: false, at: "2026-11-25T10:00:00.000Z" }
})

beforeAll(async () => {
  if (server !== undefined) await onServer(`CREATE DATABASE ${database}`)
  await withDatabase(Effect.gen(function*() {
    const store = yield* EventStore
    for (const [stream, count] of [["agent-1", 3], ["agent-2", 2], ["file-9", 4]] as const) {
      yield* store.append([{ stream, expected: ExpectedVersion.NoStream, events: Array.from({ length: count }, (_, i) => ({ type: "Seeded", data: { i } })) }])
    }
    for (const [id, name] of [["w1", "Acme"], ["w2", "Globex"]] as const) {
      yield* store.append([{ stream: `workspace-${id}`, expected: ExpectedVersion.NoStream, events: [workspaceCreated(id, name)] }])
    }
  }))
}, 600_000)

afterAll(async () => {
  rmSync(dataDir, { recursive: true, force: true })
  if (server !== undefined) await onServer(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`)
})

// Each CLI run starts a process that opens the database: seconds each, a minute on a loaded machine.
const timeout = 600_000

describe("the admin CLI on the database", () => {
  it("rebuilds a read model in place from the log and prints it", () => {
    const replayed = cli("replay", "--in-place", "category-stats")
    assert.strictEqual(replayed.code, 0, replayed.stderr)
    assert.include(replayed.stdout, "category-stats: rebuilt from 11 events")
    const stats = cli("stats").stdout
    assert.match(stats, /^agent\t2 streams\t5 events\tlast /m)
    assert.match(stats, /^file\t1 streams\t4 events\tlast /m)
    assert.match(stats, /^workspace\t2 streams\t2 events\tlast /m)
  }, timeout)

  it("rebuilds every read model in place when none is named", () => {
    const all = cli("replay", "--in-place")
    assert.strictEqual(all.code, 0, all.stderr)
    assert.include(all.stdout, "category-stats: rebuilt from 11 events")
    assert.include(all.stdout, "workspaces: rebuilt from 11 events")
  }, timeout)

  it("compares every read model rebuilt into a fresh schema with the live one: equal, exit 0, nothing left behind", async () => {
    const checked = cli("replay")
    assert.strictEqual(checked.code, 0, checked.stderr)
    assert.include(checked.stdout, "workspaces: equal (1 table, 11 events)")
    assert.include(checked.stdout, "category-stats: equal (1 table, 11 events)")
    assert.match(checked.stdout, /^\d+ read models rebuilt from 11 events into a fresh schema: all equal to the live ones$/m)
    const schemas = await withDatabase(SqlClient.SqlClient.use((sql) =>
      sql<{ name: string }>`SELECT nspname AS name FROM pg_namespace WHERE nspname LIKE 'cairn_check_%'`
    ))
    assert.deepStrictEqual(schemas, [], "the fresh schema is rolled back")
  }, timeout)

  it("finds a tampered row and a stray row, prints them, and exits 1; an in-place rebuild repairs it", async () => {
    await withDatabase(SqlClient.SqlClient.use((sql) =>
      Effect.all([
        sql`UPDATE cairn_workspaces SET name = 'Tampered' WHERE id = 'w2'`,
        sql`INSERT INTO cairn_workspaces (id, name, plan, agent_limit, internal, created_at)
          VALUES ('stray', 'Stray', 'pro', 5, false, '2026-11-25T11:00:00Z')`
      ])
    ))
    const checked = cli("replay")
    assert.strictEqual(checked.code, 1, checked.stderr)
    assert.include(checked.stdout, "workspaces: DIFFERS (1 table, 11 events)")
    assert.include(checked.stdout, "  cairn_workspaces: 2 rows only in the live table, 1 row only in the rebuild")
    assert.match(checked.stdout, /^ {4}live: {4}\{.*"name": ?"Tampered"/m)
    assert.match(checked.stdout, /^ {4}live: {4}\{.*"id": ?"stray"/m)
    assert.match(checked.stdout, /^ {4}rebuilt: \{.*"name": ?"Globex"/m)
    assert.include(checked.stdout, "files: equal")
    assert.include(checked.stdout, ": 1 differ")
    assert.include(checked.stderr, "cairn: 1 read model(s) differ from the log: workspaces.")
    assert.notInclude(checked.stderr, "    at ")

    const repaired = cli("replay", "--in-place", "workspaces")
    assert.strictEqual(repaired.code, 0, repaired.stderr)
    const again = cli("replay", "workspaces")
    assert.strictEqual(again.code, 0, again.stdout)
    assert.include(again.stdout, "workspaces: equal")
  }, timeout)

  it("checks an asynchronous read model only up to its checkpoint, and says how far behind the log it is", async () => {
    await withDatabase(Effect.gen(function*() {
      const store = yield* EventStore
      yield* store.append([{ stream: "agent-3", expected: ExpectedVersion.NoStream, events: [{ type: "Seeded", data: {} }] }])
    }))
    const checked = cli("replay", "category-stats")
    assert.strictEqual(checked.code, 0, checked.stdout)
    assert.include(checked.stdout, "category-stats: equal (1 table, 11 events, as of its checkpoint: 1 event behind the log)")
    assert.notInclude(checked.stdout, "workspaces", "only the read model named is checked")
  }, timeout)

  it("refuses an unknown read model with a clear message and exit code 1", () => {
    const unknown = cli("replay", "nope")
    assert.strictEqual(unknown.code, 1)
    assert.include(unknown.stderr, "cairn: No projection named nope")
    assert.notInclude(unknown.stderr, "    at ")
  }, timeout)
})
