/**
 * bench:store's growth section: whether catch-up (E) and stream reads (C) stay linear as the log grows. On a fresh
 * database the log is filled through the store to each size in turn (E: 10k, 100k, 1M events by default,
 * `BENCH_GROWTH_SIZES` to change), and at each size a new consumer catches up with the whole log, paired with a
 * raw keyset scan of the same rows in the same order and batch size (the floor for any paginated consumer). C reads
 * one stream of 1k, 10k and 100k events against a plain SELECT. Each prints the per-event cost at each size: flat
 * means linear.
 */
import { EventStore, ExpectedVersion, type Projection, Subscription } from "@cairn/event-store"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import * as Paired from "./Paired.ts"

const columns = "global_position, transaction_id::text AS transaction_id, stream_id, version, event_id, type, data, metadata, recorded_at"
const batchSize = 1000

const sizes = (process.env["BENCH_GROWTH_SIZES"] ?? "10000,100000,1000000").split(",").map(Number)

const events = (count: number, offset: number) =>
  Array.from({ length: count }, (_, i) => ({ type: "DidSomething", data: { id: offset + i, description: "something weird" } }))

const microsPerEvent = (millis: number, count: number) => ((millis * 1000) / count).toFixed(2)

export const run = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const store = yield* EventStore
  const run = `g${Date.now().toString(36)}`
  const rows: Array<Record<string, string>> = []

  // E: fill the log to each size (1,000-event appends to new streams), then catch up from its start.
  let logSize = 0
  for (const size of sizes) {
    for (; logSize < size; logSize += batchSize) {
      yield* store.append([{ stream: `${run}-fill-${logSize}`, expected: ExpectedVersion.NoStream, events: events(batchSize, logSize) }])
    }
    let consumer = 0
    const catchUp = (_round: number) =>
      Effect.gen(function*() {
        let consumed = 0
        const counter: Projection = { name: `${run}-e-${size}-${consumer++}`, apply: (batch) => Effect.sync(() => void (consumed += batch.length)), reset: Effect.void }
        yield* Subscription.catchUp(counter, batchSize)
        if (consumed !== size) return yield* Effect.die(`caught up with ${consumed} of ${size} events`)
      })
    const rawScan = (_round: number) =>
      Effect.gen(function*() {
        let after = { tx: "0", position: 0n }
        let scanned = 0
        for (;;) {
          const batch = yield* sql<{ transaction_id: string; global_position: bigint }>`SELECT ${sql.literal(columns)} FROM cairn_events
            WHERE (transaction_id, global_position) > (${after.tx}::xid8, ${after.position})
            ORDER BY cairn_events.transaction_id, cairn_events.global_position LIMIT ${batchSize}`
          scanned += batch.length
          if (batch.length < batchSize) break
          const last = batch[batch.length - 1]!
          after = { tx: last.transaction_id, position: BigInt(last.global_position) }
        }
        if (scanned !== size) return yield* Effect.die(`scanned ${scanned} of ${size} events`)
      })
    const paired = yield* Paired.throughput({ rounds: size >= 1_000_000 ? 2 : 4, opsPerBlock: size, measured: catchUp, baselines: { raw: rawScan } })
    rows.push({
      workload: `E catch-up, ${size.toLocaleString("en")} events`,
      store: `${microsPerEvent(1000 / paired.rates.measured, 1)} µs/event`,
      raw: `${microsPerEvent(1000 / paired.rates.raw, 1)} µs/event`,
      "vs raw (median, min–max)": Paired.show(paired.ratios.raw)
    })
  }

  // C: one stream of each size, read whole.
  for (const size of [1_000, 10_000, 100_000]) {
    const stream = `${run}-c-${size}`
    for (let written = 0; written < size; written += batchSize) {
      yield* store.append([{ stream, expected: written === 0 ? ExpectedVersion.NoStream : ExpectedVersion.Exact(written), events: events(batchSize, written) }])
    }
    const paired = yield* Paired.throughput({
      rounds: 6,
      opsPerBlock: size,
      measured: () =>
        Effect.flatMap(store.readStream(stream), (read) => read.length === size ? Effect.void : Effect.die(`read ${read.length} of ${size}`)),
      baselines: { raw: () => sql`SELECT ${sql.literal(columns)} FROM cairn_events WHERE stream_id = ${stream} ORDER BY version` }
    })
    rows.push({
      workload: `C read one stream, ${size.toLocaleString("en")} events`,
      store: `${microsPerEvent(1000 / paired.rates.measured, 1)} µs/event`,
      raw: `${microsPerEvent(1000 / paired.rates.raw, 1)} µs/event`,
      "vs raw (median, min–max)": Paired.show(paired.ratios.raw)
    })
  }
  return rows
})
