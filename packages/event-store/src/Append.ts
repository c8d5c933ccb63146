/**
 * Checks and normalises an append before any adapter writes it: every event gets a UUID, streams are named once
 * and sorted (so concurrent multi-stream appends lock in one order and cannot deadlock), versions are whole.
 */
import { Effect } from "effect"
import type { StreamAppend } from "./EventStore.ts"
import { InvalidAppend } from "./EventStoreError.ts"
import type { ExpectedVersion } from "./ExpectedVersion.ts"
import type { EventMetadata } from "./RecordedEvent.ts"

export interface PreparedEvent {
  readonly eventId: string
  readonly type: string
  /**
   * What a reader will read back: the caller's own value when it is plain JSON (its text parses back to an equal
   * value), else that text parsed.
   */
  readonly data: unknown
  readonly metadata: EventMetadata
  /** `data` as JSON text, serialised once here so every adapter rejects the same values. */
  readonly dataJson: string
  readonly metadataJson: string
}

export interface PreparedStream {
  readonly stream: string
  readonly expected: ExpectedVersion
  readonly events: ReadonlyArray<PreparedEvent>
}

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** JSON text for a value, or undefined when it has none (undefined, a function, a BigInt, a cycle). */
const toJson = (value: unknown): string | undefined => {
  try {
    return JSON.stringify(value)
  } catch {
    return undefined
  }
}

/**
 * True when JSON text of `value` parses back to a value deeply equal to it: null, booleans, strings, finite numbers
 * other than -0, and arrays without holes and objects of plain prototype made of those, with no symbol keys.
 * Anything else (undefined members, dates, class instances, toJSON) changes in the round trip. Accessor properties
 * are read as data: a getter that answers differently each time is not event data.
 */
export const isPlainJson = (value: unknown): boolean => {
  if (value === null) return true
  switch (typeof value) {
    case "string":
    case "boolean":
      return true
    case "number":
      return Number.isFinite(value) && !Object.is(value, -0)
    case "object": {
      if (Array.isArray(value)) {
        if (Object.getPrototypeOf(value) !== Array.prototype) return false
        for (let i = 0; i < value.length; i++) if (!(i in value) || !isPlainJson(value[i])) return false
        return Object.keys(value).length === value.length
      }
      const prototype = Object.getPrototypeOf(value)
      if (prototype !== Object.prototype && prototype !== null) return false
      for (const key in value) if (!isPlainJson((value as Record<string, unknown>)[key])) return false
      return Object.getOwnPropertySymbols(value).length === 0
    }
    default:
      return false
  }
}

const invalid = (reason: string) => new InvalidAppend({ reason })

/**
 * The appends checked and normalised, or why they are refused: synchronous, so an adapter can run it inside the
 * one Effect step that starts its write (this runs once per append).
 */
export const prepareUnsafe = (appends: ReadonlyArray<StreamAppend>): ReadonlyArray<PreparedStream> | InvalidAppend => {
  const single = appends.length === 1
  const seenStreams = single ? undefined : new Set<string>()
  const seenIds = new Set<string>()
  const prepared: Array<PreparedStream> = []
  for (const append of appends) {
    if (append.stream.length === 0) return invalid("a stream name is empty")
    if (seenStreams !== undefined) {
      if (seenStreams.has(append.stream)) return invalid(`stream ${append.stream} is named twice`)
      seenStreams.add(append.stream)
    }
    if (append.expected._tag === "Exact" && !(Number.isSafeInteger(append.expected.version) && append.expected.version >= 0)) {
      return invalid(`expected version ${append.expected.version} is not a whole number >= 0`)
    }
    const events: Array<PreparedEvent> = []
    for (const event of append.events) {
      // A generated id is a lowercase UUID already; only a caller's id needs checking.
      const eventId = event.eventId === undefined ? crypto.randomUUID() : event.eventId.toLowerCase()
      if (event.eventId !== undefined && !uuid.test(eventId)) return invalid(`event id ${event.eventId} is not a UUID`)
      if (seenIds.has(eventId)) return invalid(`event id ${eventId} appears twice`)
      if (event.type.length === 0) return invalid("an event type is empty")
      const dataJson = toJson(event.data)
      if (dataJson === undefined) return invalid(`event ${eventId} data is not JSON`)
      const metadata = event.metadata ?? {}
      seenIds.add(eventId)
      events.push({ eventId, type: event.type, data: isPlainJson(event.data) ? event.data : JSON.parse(dataJson), metadata, dataJson, metadataJson: metadata === event.metadata ? JSON.stringify(metadata) : "{}" })
    }
    prepared.push({ stream: append.stream, expected: append.expected, events })
  }
  if (prepared.length > 1) prepared.sort((a, b) => (a.stream < b.stream ? -1 : a.stream > b.stream ? 1 : 0))
  return prepared
}

export const prepare = (
  appends: ReadonlyArray<StreamAppend>
): Effect.Effect<ReadonlyArray<PreparedStream>, InvalidAppend> =>
  Effect.suspend(() => {
    const prepared = prepareUnsafe(appends)
    return prepared instanceof InvalidAppend ? Effect.fail(prepared) : Effect.succeed(prepared)
  })
