/**
 * Events as callers write them (`NewEvent`) and as the store returns them (`RecordedEvent`), with the position
 * that orders the global log.
 */

/** Who and what caused an event: kept beside it for audit and tracing. */
export interface EventMetadata {
  readonly causationId?: string
  readonly correlationId?: string
  readonly actor?: string
}

export interface NewEvent {
  /** A UUID. Retrying an append with the same ids is acknowledged without writing twice; omit it to get a fresh one. */
  readonly eventId?: string
  readonly type: string
  /** Any JSON value. */
  readonly data: unknown
  readonly metadata?: EventMetadata
}

/**
 * Where an event stands in the global log. The log is ordered by the writing transaction's id, then by the
 * event's global position. Both parts are needed: positions are taken from a sequence before commit, so a later
 * commit can hold a lower position (docs/event-store.md explains the fence that makes this order final).
 */
export interface LogPosition {
  readonly transactionId: bigint
  readonly globalPosition: bigint
}

export interface RecordedEvent {
  readonly eventId: string
  readonly type: string
  readonly stream: string
  /** 1 for a stream's first event. */
  readonly version: number
  readonly position: LogPosition
  readonly recordedAt: Date
  readonly data: unknown
  readonly metadata: EventMetadata
}

/** The log position before any event. */
export const start: LogPosition = { transactionId: 0n, globalPosition: 0n }

/** Log order: negative when `a` comes first. */
export const compare = (a: LogPosition, b: LogPosition): number =>
  a.transactionId !== b.transactionId
    ? a.transactionId < b.transactionId ? -1 : 1
    : a.globalPosition === b.globalPosition ? 0 : a.globalPosition < b.globalPosition ? -1 : 1

/** `transactionId:globalPosition`, the form positions take in checkpoints, logs and the CLI. */
export const formatPosition = (position: LogPosition): string =>
  `${position.transactionId}:${position.globalPosition}`

/** A position as `formatPosition` writes it, or `0` for the log's start; undefined for anything else. */
export const parsePosition = (text: string): LogPosition | undefined => {
  if (text === "0") return start
  const match = /^(\d{1,19}):(\d{1,19})$/.exec(text)
  return match === null ? undefined : { transactionId: BigInt(match[1]!), globalPosition: BigInt(match[2]!) }
}
