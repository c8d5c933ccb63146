/**
 * An asynchronous read model of the log's shape: for each stream category (the stream name up to its first
 * "-", such as `agent` or `file`), how many streams and events it holds and when it last changed. Operators read
 * it with `npm run cli -- stats`; it is also the projection that proves replays rebuild exactly.
 */
import type { Projection, RecordedEvent } from "@cairn/event-store"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export interface CategoryStat {
  readonly category: string
  readonly streams: number
  readonly events: number
  readonly lastRecordedAt: Date
}

export const categoryOf = (stream: string): string => {
  const dash = stream.indexOf("-")
  return dash === -1 ? stream : stream.slice(0, dash)
}

const summarise = (events: ReadonlyArray<RecordedEvent>) => {
  const byCategory = new Map<string, { streams: number; events: number; last: Date }>()
  for (const event of events) {
    const category = categoryOf(event.stream)
    const stat = byCategory.get(category) ?? { streams: 0, events: 0, last: event.recordedAt }
    stat.events++
    if (event.version === 1) stat.streams++
    if (event.recordedAt > stat.last) stat.last = event.recordedAt
    byCategory.set(category, stat)
  }
  return [...byCategory.entries()]
}

const setup = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE IF NOT EXISTS cairn_category_stats (
    category text PRIMARY KEY,
    streams bigint NOT NULL,
    events bigint NOT NULL,
    last_recorded_at timestamptz NOT NULL
  )`
})

export const projection: Projection<SqlClient.SqlClient> = {
  name: "category-stats",
  setup,
  apply: (events) =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const rows = summarise(events)
      if (rows.length === 0) return
      yield* sql`INSERT INTO cairn_category_stats AS c (category, streams, events, last_recorded_at)
        SELECT * FROM unnest(
          ${rows.map(([category]) => category)}::text[],
          ${rows.map(([, s]) => s.streams)}::int8[],
          ${rows.map(([, s]) => s.events)}::int8[],
          ${rows.map(([, s]) => s.last.toISOString())}::timestamptz[]
        )
        ON CONFLICT (category) DO UPDATE SET
          streams = c.streams + excluded.streams,
          events = c.events + excluded.events,
          last_recorded_at = greatest(c.last_recorded_at, excluded.last_recorded_at)`
    }),
  reset: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`DELETE FROM cairn_category_stats`
  })
}

/** The read model as it stands (empty before the projection first ran). */
export const read = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* setup
  const rows = yield* sql<{ category: string; streams: bigint; events: bigint; last_recorded_at: Date }>`
    SELECT category, streams, events, last_recorded_at FROM cairn_category_stats ORDER BY category`
  return rows.map((row): CategoryStat => ({
    category: row.category,
    streams: Number(row.streams),
    events: Number(row.events),
    lastRecordedAt: row.last_recorded_at
  }))
})
