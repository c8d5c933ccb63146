/**
 * `npm run bench:store`: the event store against raw SQL on the same database, in the same run, through the
 * same driver, so each ratio is the store's own overhead. PGlite in a temporary directory by default; a fresh
 * database on the server when DATABASE_URL is set.
 *
 *   A  sequential single-event appends to new streams         raw: single-row INSERTs, each its own transaction
 *   B  100-event appends to one stream, exact version          raw: 100-row multi-row INSERTs
 *   C  read one 10,000-event stream                            raw: plain SELECT of the same rows
 *   D  8 concurrent callers appending to new streams           raw: the same with single-row INSERTs
 *   E  catch-up of the whole log through a checkpointed consumer (and its growth: StoreGrowth.ts)
 *   F  sequential single-event appends to new streams by a store with an inline projection, as every write of the
 *      server is (a read-model row per event, in the append's transaction)
 *                                                              raw: BEGIN; the event's INSERT; the row's; COMMIT
 *
 * Every workload runs paired with its baselines in rounds of small blocks whose order rotates (Paired.ts), and
 * prints the median and the min–max of the per-round ratios. The raw inserts write a table shaped and indexed
 * like cairn_events (the log-order and event-id indexes are what make it an event log), each a durable commit
 * (synchronous_commit stays on), so the ratio is the cost of the store's guarantees and code. "floor" is a table
 * with only a primary key; for A and D "anchor R" repeats the reference harness the targets came from
 * (shared/docs/reference/eventstore-anchors.md §1.8: BEGIN; INSERT into a 3-column table; COMMIT), for context.
 * `BENCH_GROWTH_SIZES=10000,100000` runs a shorter growth section; `BENCH_GROWTH_SIZES=` skips it.
 * `BENCH_WORKLOADS=AD` runs only those workloads (C reads the stream B writes, so it needs B).
 * `BENCH_SEAL=on` seals the log (audit/LogSeals.ts, decision 0053) at the end of every measured block of A, B, D and
 * F, inside its timing: the store's side then pays for hashing, signing and storing its events' seals as well as for
 * appending them (on a server the sealer does it in the background, off the request's path). Compare its ratios with
 * a run without it for what the tamper-evident log costs appends.
 * For A, D and F it also prints the Node process's CPU per append, store and raw, which a loaded machine disturbs
 * far less than the wall-clock ratios.
 */
import { LogSeals } from "@cairn/application"
import { TokenSigner } from "@cairn/auth"
import { JoseTokenSigner } from "@cairn/auth/node"
import { EventStore, ExpectedVersion, type Projection, Subscription } from "@cairn/event-store"
import { PgDatabase, PgEventStore } from "@cairn/event-store-pg"
import * as PgliteWorker from "@cairn/event-store-pg/PgliteWorker"
import { layerFreshPostgres } from "@cairn/event-store-pg/testing"
import { Effect, Layer } from "effect"
import * as Paired from "./Paired.ts"
import * as StoreGrowth from "./StoreGrowth.ts"
import { SqlClient } from "effect/sql"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

const url = process.env["DATABASE_URL"] || undefined
const tempDir = url === undefined ? mkdtempSync(join(tmpdir(), "cairn-bench-")) : undefined
// `PGLITE_WORKER=on`: the database runs in a worker thread, as a server's with that setting (PgliteWorker.ts).
if (url === undefined && process.env["PGLITE_WORKER"] === "on") {
  PgliteWorker.openEarly({ dataDir: join(tempDir!, "pg"), templates: undefined })
}
const database = url === undefined
  ? PgDatabase.layerPglite(join(tempDir!, "pg"))
  : layerFreshPostgres(url, 10)

// xid8 has no text decoder in the driver, so every reader (the store too) casts it.
const columns = "global_position, transaction_id::text AS transaction_id, stream_id, version, event_id, type, data, metadata, recorded_at"
const payload = (i: number) => ({ id: i, description: "something weird" })

const workloads = process.env["BENCH_WORKLOADS"]?.toUpperCase() ?? "ABCDEF"
const runs = (workload: string) => workloads.includes(workload) && (workload !== "C" || workloads.includes("B"))

const rows: Array<Record<string, string>> = []
const record = (workload: string, paired: Paired.Paired<string>, unit: string, target: string, met: (ratios: Record<string, Paired.Spread>) => boolean) => {
  const column = (name: string) => paired.ratios[name] === undefined ? "" : Paired.show(paired.ratios[name]!)
  rows.push({
    workload,
    store: `${paired.rates.measured.toLocaleString("en")} ${unit}`,
    raw: `${paired.rates["raw"]!.toLocaleString("en")} ${unit}`,
    "vs raw": column("raw"),
    "vs floor": column("floor"),
    "vs anchor R": column("anchor"),
    target,
    met: met(paired.ratios) ? "yes" : "NO"
  })
}

// Node's CPU per operation, per side and round (process.cpuUsage, user + system, all of the process's threads): on a
// busy machine wall time swings with the load, while the CPU an append costs the process stays comparable.
const cpuRows: Array<Record<string, string>> = []
const cpuPerOp = () => {
  const perRound: Record<string, Array<number>> = {}
  const measure = <A, E, R>(side: string, operations: number, block: Effect.Effect<A, E, R>) =>
    Effect.suspend(() => {
      const before = process.cpuUsage()
      return Effect.tap(block, () =>
        Effect.sync(() => {
          const used = process.cpuUsage(before)
          ;(perRound[side] ??= []).push((used.user + used.system) / operations)
        }))
    })
  const report = (workload: string) => {
    const store = perRound["store"] ?? []
    const raw = perRound["raw"] ?? []
    const median = (values: ReadonlyArray<number>) => Paired.spread(values).median
    cpuRows.push({
      workload,
      "store µs CPU/op": median(store).toFixed(0),
      "raw µs CPU/op": median(raw).toFixed(0),
      "store/raw CPU per round": Paired.show(Paired.spread(store.map((s, i) => s / raw[i]!)))
    })
  }
  return { measure, report }
}

const sealing = process.env["BENCH_SEAL"] === "on"

const program = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const store = yield* EventStore
  const seals = sealing
    ? yield* LogSeals.make.pipe(Effect.provideService(TokenSigner, yield* Effect.flatMap(JoseTokenSigner.generate, JoseTokenSigner.make)))
    : undefined
  /** A measured block, and with BENCH_SEAL=on the sealing of what it appended. */
  const sealed = <A, E, R>(block: Effect.Effect<A, E, R>) => seals === undefined ? block : Effect.tap(block, () => seals.sealPending)
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

  if (seals !== undefined) yield* seals.sealPending

  // A: 20 rounds of 500 appends per side.
  const sequential = (name: string, op: (stream: string, i: number) => Effect.Effect<unknown, unknown>) => (round: number) =>
    Effect.gen(function*() {
      for (let i = 0; i < 500; i++) yield* op(`${run}-${name}A-${round}-${i}`, i)
    })
  if (runs("A")) {
    const cpu = cpuPerOp()
    const a = yield* Paired.throughput({
      rounds: 20,
      opsPerBlock: 500,
      measured: (round) => cpu.measure("store", 500, sealed(sequential("store", appendNew)(round))),
      baselines: { raw: (round) => cpu.measure("raw", 500, sequential("raw", rawInsert)(round)), floor: sequential("floor", floorInsert), anchor: sequential("anchor", anchorInsert) }
    })
    record("A sequential appends", a, "ev/s", ">= 0.95x raw", (r) => r["raw"]!.median >= 0.95)
    cpu.report("A sequential appends")
  }

  // B: 10 rounds of 10 appends of 100 events per side.
  const streamB = `${run}-B`
  const batch = (offset: number) => Array.from({ length: 100 }, (_, i) => ({ type: "DidSomething", data: payload(offset + i) }))
  const multiRow = (table: string) => (round: number) =>
    Effect.gen(function*() {
      for (let k = 0; k < 10; k++) {
        const b = round * 10 + k
        const rows: Array<Record<string, string | number>> = batch(b * 100).map((e, i) => ({ stream_id: `${run}-${table}B`, version: b * 100 + i + 1, event_id: crypto.randomUUID(), type: e.type, data: JSON.stringify(e.data) }))
        yield* sql`INSERT INTO ${sql(table)} ${sql.insert([rows[0]!, ...rows.slice(1)])}`
      }
    })
  if (runs("B")) {
    const b = yield* Paired.throughput({
      rounds: 10,
      opsPerBlock: 1000,
      measured: (round) =>
        sealed(Effect.gen(function*() {
          for (let k = 0; k < 10; k++) {
            const at = (round * 10 + k) * 100
            yield* store.append([{ stream: streamB, expected: ExpectedVersion.Exact(at), events: batch(at) }])
          }
        })),
      baselines: { raw: multiRow("bench_raw"), floor: multiRow("bench_floor") }
    })
    record("B 100-event appends to one stream", b, "ev/s", ">= 0.9x raw multi-row", (r) => r["raw"]!.median >= 0.9)
  }

  // C: the 10,000-event stream B wrote, read whole, 10 rounds.
  if (runs("C")) {
    const c = yield* Paired.throughput({
      rounds: 10,
      opsPerBlock: 10_000,
      measured: () => Effect.flatMap(store.readStream(streamB), (events) => events.length === 10_000 ? Effect.void : Effect.die(`read ${events.length} events`)),
      baselines: { raw: () => sql`SELECT ${sql.literal(columns)} FROM cairn_events WHERE stream_id = ${streamB} ORDER BY version` }
    })
    record("C read a 10k-event stream", c, "ev/s", ">= 0.5x raw", (r) => r["raw"]!.median >= 0.5)
  }

  // D: 10 rounds; in each, 8 concurrent callers append 125 events each per side.
  const concurrent = (name: string, op: (stream: string, i: number) => Effect.Effect<unknown, unknown>) => (round: number) =>
    Effect.forEach(Array.from({ length: 8 }, (_, caller) => caller), (caller) =>
      Effect.forEach(Array.from({ length: 125 }, (_, i) => i), (i) => op(`${run}-${name}D-${round}-${caller}-${i}`, i), { discard: true }),
      { concurrency: 8, discard: true })
  if (runs("D")) {
    const cpu = cpuPerOp()
    const d = yield* Paired.throughput({
      rounds: 10,
      opsPerBlock: 1000,
      measured: (round) => cpu.measure("store", 1000, sealed(concurrent("store", appendNew)(round))),
      baselines: { raw: (round) => cpu.measure("raw", 1000, concurrent("raw", rawInsert)(round)), floor: concurrent("floor", floorInsert), anchor: concurrent("anchor", anchorInsert) }
    })
    record("D 8 concurrent callers", d, "ev/s", ">= 1.5x raw", (r) => r["raw"]!.median >= 1.5)
    cpu.report("D 8 concurrent callers")
  }

  // E: the whole log so far through a new checkpointed consumer, against one plain scan of it, 4 rounds.
  if (runs("E")) {
    let consumer = 0
    const e = yield* Paired.throughput({
      rounds: 4,
      opsPerBlock: 1,
      measured: () => Subscription.catchUp({ name: `${run}-catch-up-${consumer++}`, apply: () => Effect.void, reset: Effect.void } satisfies Projection, 1000),
      baselines: { raw: () => sql`SELECT ${sql.literal(columns)} FROM cairn_events ORDER BY cairn_events.transaction_id, cairn_events.global_position` }
    })
    const [{ count }] = yield* sql<{ count: string }>`SELECT count(*)::text AS count FROM cairn_events`
    rows.push({
      workload: `E catch-up of ${Number(count).toLocaleString("en")} events`,
      store: "",
      raw: "",
      "vs raw": Paired.show(e.ratios.raw),
      "vs floor": "",
      "vs anchor R": "",
      target: ">= 0.5x raw",
      met: e.ratios.raw.median >= 0.5 ? "yes" : "NO"
    })
  }

  // F: 20 rounds of 500 appends per side, through a second store on the same database with one inline projection.
  if (runs("F")) {
    yield* sql`CREATE TABLE bench_read_model (event_id uuid PRIMARY KEY, stream_id text NOT NULL, type text NOT NULL)`
    yield* sql`CREATE TABLE bench_raw_read_model (LIKE bench_read_model INCLUDING ALL)`
    const readModel: Projection<SqlClient.SqlClient> = {
      name: "bench-read-model",
      apply: (events) =>
        Effect.forEach(events, (e) => sql`INSERT INTO bench_read_model VALUES (${e.eventId}, ${e.stream}, ${e.type})`, { discard: true }),
      reset: sql`DELETE FROM bench_read_model`
    }
    const projected = yield* PgEventStore.make({ inlineProjections: [readModel] })
    const appendProjected = (stream: string, i: number) =>
      projected.append([{ stream, expected: ExpectedVersion.NoStream, events: [{ type: "DidSomething", data: payload(i) }] }])
    const rawProjected = (stream: string, i: number) =>
      Effect.suspend(() => {
        const eventId = crypto.randomUUID()
        return sql.withTransaction(Effect.andThen(
          sql`INSERT INTO bench_raw (stream_id, version, event_id, type, data) VALUES (${stream}, 1, ${eventId}, ${"DidSomething"}, ${JSON.stringify(payload(i))}::jsonb)`,
          sql`INSERT INTO bench_raw_read_model VALUES (${eventId}, ${stream}, ${"DidSomething"})`
        ))
      })
    for (let i = 0; i < 200; i++) {
      yield* appendProjected(`${run}-warmF-${i}`, i)
      yield* rawProjected(`${run}-warmrawF-${i}`, i)
    }
    const cpu = cpuPerOp()
    const f = yield* Paired.throughput({
      rounds: 20,
      opsPerBlock: 500,
      measured: (round) => cpu.measure("store", 500, sealed(sequential("storeF", appendProjected)(round))),
      baselines: { raw: (round) => cpu.measure("raw", 500, sequential("rawF", rawProjected)(round)) }
    })
    record("F appends with an inline projection", f, "ev/s", ">= 0.95x raw", (r) => r["raw"]!.median >= 0.95)
    cpu.report("F appends with an inline projection")
  }

  const where = url === undefined ? "embedded PGlite (temporary directory)" : "PostgreSQL (fresh database)"
  const [{ version }] = yield* sql<{ version: string }>`SELECT version()`
  console.log(`\nbench:store on ${where}: ${version.split(" on ")[0]}, Node ${process.version}${sealing ? ", every measured block sealed (BENCH_SEAL=on)" : ""}\n`)
  console.table(rows)
  if (cpuRows.length > 0) {
    console.log("\nNode CPU per append (medians over rounds; the ratio is paired per round, lower is better)\n")
    console.table(cpuRows)
  }
})

const growthDatabase = () => {
  if (url !== undefined) return layerFreshPostgres(url, 10)
  return PgDatabase.layerPglite(join(tempDir!, "growth"))
}

const growth = Effect.gen(function*() {
  const table = yield* StoreGrowth.run
  console.log("\nGrowth: per-event cost as the log (E) and a stream (C) grow; flat means linear\n")
  console.table(table)
}).pipe(Effect.provide(PgEventStore.layer().pipe(Layer.provideMerge(Layer.suspend(growthDatabase)))), Effect.scoped)

await Effect.runPromise(
  program.pipe(
    Effect.provide(PgEventStore.layer().pipe(Layer.provideMerge(database))),
    Effect.scoped,
    Effect.andThen(process.env["BENCH_GROWTH_SIZES"] === "" ? Effect.void : growth)
  )
).finally(() => tempDir && rmSync(tempDir, { recursive: true, force: true }))
