/**
 * `npm run bench:store`: the event store against raw SQL on the same database, in the same run, through the
 * same driver, so each ratio is the store's own overhead. PGlite in a temporary directory by default; a fresh
 * database on the server when DATABASE_URL is set.
 *
 *   A  10,000 sequential single-event appends to new streams    raw: single-row insert transactions
 *   B  100 appends of 100 events to one stream, exact version    raw: 100-row multi-row inserts
 *   C  read one 10,000-event stream (median of 10)              raw: plain SELECT of the same rows
 *   D  8 concurrent callers x 1,250 appends to new streams       raw: the same with single-row inserts
 *   E  catch-up of the whole log through a checkpointed consumer raw: plain SELECT scan of the log
 *
 * The raw inserts write a table shaped and indexed like cairn_events (the log-order and event-id indexes are
 * what make it an event log), so the ratio is the cost of the store's guarantees and code. A second column
 * gives the floor: a table with only a primary key. For A and D a third baseline repeats the reference harness the
 * targets came from (shared/docs/reference/eventstore-anchors.md §1.8 "R"): BEGIN; INSERT into a 3-column
 * table; COMMIT. It is shown for context; "met" is judged against the strict "raw".
 */
import { EventStore, ExpectedVersion, type Projection, Subscription } from "@cairn/event-store"
import { PgDatabase, PgEventStore } from "@cairn/event-store-pg"
import { layerFreshPostgres } from "@cairn/event-store-pg/testing"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

const url = process.env["DATABASE_URL"] || undefined
const tempDir = url === undefined ? mkdtempSync(join(tmpdir(), "cairn-bench-")) : undefined
const database = url === undefined
  ? PgDatabase.layerPglite(join(tempDir!, "pg"))
  : layerFreshPostgres(url, 10)

// xid8 has no text decoder in the driver, so every reader (the store too) casts it.
const columns = "global_position, transaction_id::text AS transaction_id, stream_id, version, event_id, type, data, metadata, recorded_at"
const payload = (i: number) => ({ id: i, description: "something weird" })
const now = () => performance.now()
const percentile = (sorted: ReadonlyArray<number>, p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!
const median = (values: ReadonlyArray<number>) => percentile([...values].sort((a, b) => a - b), 0.5)

const rows: Array<Record<string, string>> = []
const perSecond = (events: number, millis: number) => Math.round((events / millis) * 1000)
const record = (
  workload: string,
  unit: string,
  measured: { store: number; raw: number; floor?: number; anchor?: number },
  target: string,
  met: boolean,
  higherIsBetter = true
) => {
  const ratio = (baseline: number) => `${(higherIsBetter ? measured.store / baseline : baseline / measured.store).toFixed(2)}x`
  const show = (n: number) => `${n.toLocaleString("en")} ${unit}`
  rows.push({
    workload,
    store: show(measured.store),
    raw: show(measured.raw),
    "vs raw": ratio(measured.raw),
    "raw floor": measured.floor === undefined ? "" : show(measured.floor),
    "vs floor": measured.floor === undefined ? "" : ratio(measured.floor),
    "vs anchor R": measured.anchor === undefined ? "" : ratio(measured.anchor),
    target,
    met: met ? "yes" : "NO"
  })
}

const program = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const store = yield* EventStore
  const run = `b${Date.now().toString(36)}`
  yield* sql`CREATE TABLE bench_raw (LIKE cairn_events INCLUDING ALL)`
  yield* sql`CREATE TABLE bench_anchor (stream_id text NOT NULL, pos bigint NOT NULL, data jsonb NOT NULL)`
  yield* sql`CREATE TABLE bench_floor (stream_id text NOT NULL, version bigint NOT NULL, event_id uuid NOT NULL, type text NOT NULL, data jsonb NOT NULL, metadata jsonb NOT NULL DEFAULT '{}', PRIMARY KEY (stream_id, version))`

  const appendNew = (stream: string, i: number) =>
    store.append([{ stream, expected: ExpectedVersion.NoStream, events: [{ type: "DidSomething", data: payload(i) }] }])
  const rawInsert = (stream: string, i: number) =>
    sql`INSERT INTO bench_raw (stream_id, version, event_id, type, data) VALUES (${stream}, 1, ${crypto.randomUUID()}, ${"DidSomething"}, ${JSON.stringify(payload(i))}::jsonb)`
  const anchorInsert = (stream: string, i: number) =>
    sql.withTransaction(sql`INSERT INTO bench_anchor (stream_id, pos, data) VALUES (${stream}, 1, ${JSON.stringify(payload(i))}::jsonb)`)
  const floorInsert = (stream: string, i: number) =>
    sql`INSERT INTO bench_floor (stream_id, version, event_id, type, data) VALUES (${stream}, 1, ${crypto.randomUUID()}, ${"DidSomething"}, ${JSON.stringify(payload(i))}::jsonb)`

  // Warm-up: prepared statements, caches, JIT.
  for (let i = 0; i < 200; i++) {
    yield* appendNew(`${run}-warm-${i}`, i)
    yield* rawInsert(`${run}-warmraw-${i}`, i)
    yield* floorInsert(`${run}-warmfloor-${i}`, i)
    yield* anchorInsert(`${run}-warmanchor-${i}`, i)
  }

  // A
  const timeSequential = (label: string, op: (i: number) => Effect.Effect<unknown, unknown>) =>
    Effect.gen(function*() {
      const latencies: Array<number> = []
      const started = now()
      for (let i = 0; i < 10_000; i++) {
        const t = now()
        yield* op(i)
        latencies.push(now() - t)
      }
      const elapsed = now() - started
      latencies.sort((a, b) => a - b)
      yield* Effect.logInfo(`${label}: p50 ${percentile(latencies, 0.5).toFixed(2)} ms, p99 ${percentile(latencies, 0.99).toFixed(2)} ms`)
      return perSecond(10_000, elapsed)
    })
  const floorA = yield* timeSequential("A floor", (i) => floorInsert(`${run}-floorA-${i}`, i))
  const rawA = yield* timeSequential("A raw", (i) => rawInsert(`${run}-rawA-${i}`, i))
  const anchorA = yield* timeSequential("A anchor R", (i) => anchorInsert(`${run}-anchorA-${i}`, i))
  const storeA = yield* timeSequential("A store", (i) => appendNew(`${run}-A-${i}`, i))
  record("A sequential appends", "ev/s", { store: storeA, raw: rawA, floor: floorA, anchor: anchorA }, ">= 0.9x raw", storeA >= 0.9 * rawA)

  // B
  const streamB = `${run}-B`
  const batch = (offset: number) => Array.from({ length: 100 }, (_, i) => ({ type: "DidSomething", data: payload(offset + i) }))
  let started = now()
  for (let b = 0; b < 100; b++) {
    yield* store.append([{ stream: streamB, expected: ExpectedVersion.Exact(b * 100), events: batch(b * 100) }])
  }
  const storeB = perSecond(10_000, now() - started)
  const multiRow = (table: string) =>
    Effect.gen(function*() {
      const started = now()
      for (let b = 0; b < 100; b++) {
        const rows: Array<Record<string, string | number>> = batch(b * 100).map((e, i) => ({ stream_id: `${run}-${table}B`, version: b * 100 + i + 1, event_id: crypto.randomUUID(), type: e.type, data: JSON.stringify(e.data) }))
        yield* sql`INSERT INTO ${sql(table)} ${sql.insert([rows[0]!, ...rows.slice(1)])}`
      }
      return perSecond(10_000, now() - started)
    })
  const rawB = yield* multiRow("bench_raw")
  const floorB = yield* multiRow("bench_floor")
  record("B 100-event appends", "ev/s", { store: storeB, raw: rawB, floor: floorB }, ">= 28,000 ev/s", storeB >= 28_000)

  // C
  const readTimes: Array<number> = []
  const rawReadTimes: Array<number> = []
  for (let i = 0; i < 13; i++) {
    let t = now()
    const events = yield* store.readStream(streamB)
    if (i >= 3) readTimes.push(now() - t)
    if (events.length !== 10_000) return yield* Effect.die(`read ${events.length} events`)
    t = now()
    yield* sql`SELECT ${sql.literal(columns)} FROM cairn_events WHERE stream_id = ${streamB} ORDER BY version`
    if (i >= 3) rawReadTimes.push(now() - t)
  }
  const storeC = median(readTimes)
  const rawC = median(rawReadTimes)
  record("C read 10k-event stream", "ms", { store: Number(storeC.toFixed(1)), raw: Number(rawC.toFixed(1)) }, "< 40 ms", storeC < 40, false)

  // D
  const concurrent = (op: (caller: number, i: number) => Effect.Effect<unknown, unknown>) =>
    Effect.gen(function*() {
      const started = now()
      yield* Effect.forEach(Array.from({ length: 8 }, (_, c) => c), (caller) =>
        Effect.forEach(Array.from({ length: 1250 }, (_, i) => i), (i) => op(caller, i), { discard: true }),
        { concurrency: 8, discard: true })
      return perSecond(10_000, now() - started)
    })
  const floorD = yield* concurrent((c, i) => floorInsert(`${run}-floorD-${c}-${i}`, i))
  const rawD = yield* concurrent((c, i) => rawInsert(`${run}-rawD-${c}-${i}`, i))
  const anchorD = yield* concurrent((c, i) => anchorInsert(`${run}-anchorD-${c}-${i}`, i))
  const storeD = yield* concurrent((c, i) => appendNew(`${run}-D-${c}-${i}`, i))
  record("D 8 concurrent callers", "ev/s", { store: storeD, raw: rawD, floor: floorD, anchor: anchorD }, ">= 0.9x raw", storeD >= 0.9 * rawD)

  // E
  let consumed = 0
  const counter: Projection = { name: `${run}-catch-up`, apply: (events) => Effect.sync(() => void (consumed += events.length)), reset: Effect.void }
  started = now()
  yield* Subscription.catchUp(counter, 1000)
  const storeE = perSecond(consumed, now() - started)
  started = now()
  const scanned = yield* sql`SELECT ${sql.literal(columns)} FROM cairn_events ORDER BY cairn_events.transaction_id, cairn_events.global_position`
  const rawE = perSecond(scanned.length, now() - started)
  record(`E catch-up of ${consumed.toLocaleString("en")} events`, "ev/s", { store: storeE, raw: rawE }, ">= 10,000 ev/s", storeE >= 10_000)

  const where = url === undefined ? "embedded PGlite (temporary directory)" : "PostgreSQL (fresh database)"
  const [{ version }] = yield* sql<{ version: string }>`SELECT version()`
  console.log(`\nbench:store on ${where}: ${version.split(" on ")[0]}, Node ${process.version}\n`)
  console.table(rows)
})

await Effect.runPromise(
  program.pipe(Effect.provide(PgEventStore.layer().pipe(Layer.provideMerge(database))), Effect.scoped)
).finally(() => tempDir && rmSync(tempDir, { recursive: true, force: true }))
