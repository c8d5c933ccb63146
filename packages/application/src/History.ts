/**
 * An audit trail: the events of several streams as one history in log order, with who did what and when. An agent's
 * history (its own stream and what was done inside it) and a file's (its CID's streams and the files holding it).
 */
import { compare, formatPosition, type RecordedEvent } from "@cairn/event-store"

export interface AgentHistoryEntry {
  readonly type: string
  readonly at: string
  readonly actor: string | null
  /** The stream the event is in: the agent's own, or one of what was done inside it (console, uploads, …). */
  readonly stream: string
  readonly version: number
  /** Its place in the log, `transactionId:globalPosition`: what `?at=` takes to show the agent as it was then. */
  readonly position: string
  readonly data: unknown
}

/** Events of several streams as one history, in log order (an agent's or a file's audit trail). */
export const historyOf = (events: ReadonlyArray<RecordedEvent>): Array<AgentHistoryEntry> =>
  [...events].sort((a, b) => compare(a.position, b.position)).map((e) => ({
    type: e.type,
    at: e.recordedAt.toISOString(),
    actor: e.metadata.actor ?? null,
    stream: e.stream,
    version: e.version,
    position: formatPosition(e.position),
    data: e.data
  }))
