/**
 * Which workspace an event is of, for the audit feed and the audit export: its own `workspaceId` when its data names
 * one (a CID's stream holds several workspaces' events), else its stream's, which is the workspace its stream's first
 * event names; an agent's streams (console, uploads, channels, …: `AuditStreams`) are its agent's, whose
 * `AgentCreated` names it. An event of no workspace (reservations, the shipped templates) is in no workspace's feed.
 */
import { AuditStreams } from "@cairn/domain"
import type { EventStore, RecordedEvent } from "@cairn/event-store"
import { Effect } from "effect"

const workspaceIdIn = (data: unknown): string | undefined => {
  const id = typeof data === "object" && data !== null ? (data as { readonly workspaceId?: unknown }).workspaceId : undefined
  return typeof id === "string" ? id : undefined
}

const agentStreamPrefixes = AuditStreams.auditStreams("")
const agentStreamOf = (stream: string) => {
  const prefix = agentStreamPrefixes.find((p) => stream.startsWith(p))
  return prefix === undefined ? stream : `agent-${stream.slice(prefix.length)}`
}

/** Streams whose workspace is known, at most this many (then forgotten all at once). */
const maxCachedStreams = 50_000

export const make = (store: EventStore["Service"]) => {
  const owners = new Map<string, string | null>()
  /** The workspace a stream is of, read once per stream. */
  const ownerOf = (stream: string) =>
    Effect.suspend(() => {
      const known = owners.get(stream)
      if (known !== undefined) return Effect.succeed(known)
      return Effect.map(store.readStream(agentStreamOf(stream), { limit: 1 }), ([first]) => {
        const owner = workspaceIdIn(first?.data) ?? null
        if (owners.size >= maxCachedStreams) owners.clear()
        owners.set(stream, owner)
        return owner
      })
    })

  /** Whether an event is of the workspace. */
  const isOf = (workspaceId: string) => (event: RecordedEvent) => {
    const own = workspaceIdIn(event.data)
    return own !== undefined ? Effect.succeed(own === workspaceId) : Effect.map(ownerOf(event.stream), (owner) => owner === workspaceId)
  }

  /** The workspaces of `streams` (each read once, as `isOf` does), for a caller that looks many events up at once. */
  const ownersOf = (streams: Iterable<string>) =>
    Effect.gen(function*() {
      const found = new Map<string, string | null>()
      for (const stream of streams) if (!found.has(stream)) found.set(stream, yield* ownerOf(stream))
      return found
    })

  return { isOf, ownersOf }
}
