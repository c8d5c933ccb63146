/**
 * Events as the log's rows come back from `cairn_events`, and as the store hands them out. `transaction_id` is an
 * xid8, which the driver cannot decode: every reader selects it cast to int8 (`columns`).
 */
import type { RecordedEvent } from "@cairn/event-store"

/** The select list every reader of whole events uses. */
export const columns = "global_position, transaction_id::text::int8 AS transaction_id, stream_id, version, event_id, type, data, metadata, recorded_at"

export interface EventRow {
  readonly global_position: bigint
  readonly transaction_id: bigint
  readonly stream_id: string
  readonly version: bigint
  readonly event_id: string
  readonly type: string
  readonly data: unknown
  readonly metadata: RecordedEvent["metadata"]
  readonly recorded_at: Date
}

export const toRecorded = (row: EventRow): RecordedEvent => ({
  eventId: row.event_id,
  type: row.type,
  stream: row.stream_id,
  version: Number(row.version),
  position: { transactionId: BigInt(row.transaction_id), globalPosition: BigInt(row.global_position) },
  recordedAt: row.recorded_at,
  data: row.data,
  metadata: row.metadata
})
