/**
 * `/v0/agents/{id}/logs`: the agent gateway's recent log lines (`{logs}` as Pinata answers, with the entries beside
 * it), and `/logs/stream`, a server-sent event stream of the lines it writes from then on. Both read the gateway's
 * log through the engine (GatewayLogs), which replaces every secret value it gave the agent.
 */
import { Agents } from "@cairn/application"
import { GatewayLogs, type LogChunk, type LogEntry } from "@cairn/agent-engine"
import { Agent } from "@cairn/domain"
import { Effect, Option, Schema, Stream } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import * as Kit from "./Kit.ts"

const LinesQuery = Schema.Struct({ lines: Schema.optional(Schema.String) })

const LogEntryWire = Schema.Struct({
  timestamp: Schema.NullOr(Schema.String),
  level: Schema.NullOr(Schema.String),
  source: Schema.NullOr(Schema.String),
  message: Schema.String
})

const LogsWire = Schema.Struct({
  /** The lines as text, one per line (`<timestamp> <LEVEL> [source] message`), as Pinata's `logs`. */
  logs: Schema.String,
  entries: Schema.Array(LogEntryWire),
  /** Where a follower reads on from: `Last-Event-ID` of the stream. */
  cursor: Schema.Int
})

/** How often a follower's log is read again when nothing new came. */
const pollInterval = "500 millis"
/** A comment line this often keeps an idle stream open through proxies. */
const keepAliveEvery = 30

/** A chunk as events: each entry its own; the last carries the cursor as its id, where a client resumes from. */
const events = (chunk: LogChunk): Array<string> =>
  chunk.entries.map((entry: LogEntry, index) =>
    `${index === chunk.entries.length - 1 ? `id: ${chunk.cursor}\n` : ""}event: log\ndata: ${JSON.stringify(entry)}\n\n`
  )

export const layer = HttpRouter.use((router) =>
  Effect.gen(function*() {
    const { agentRoute } = yield* Kit.make(router)
    const agents = yield* Agents
    const errors = [new Agent.AgentNotFound({ agentId: "" })]

    yield* agentRoute("GET", "/v0/agents/:agentId/logs", {
      summary: "The agent gateway's recent log lines",
      description: `\`lines\`: how many (100 by default, at most ${GatewayLogs.maxLogLines}). Secret values never appear: they are replaced with \`${GatewayLogs.redactedMark}\`.`,
      query: LinesQuery,
      response: { schema: LogsWire },
      errors
    }, ({ principal, agentId, request }) =>
      Effect.map(agents.recentLogs(principal, agentId, Kit.query(request, "lines")), (chunk): typeof LogsWire.Type => ({
        logs: chunk.entries.map(GatewayLogs.formatEntry).join("\n"),
        entries: chunk.entries,
        cursor: chunk.cursor
      })))

    yield* agentRoute("GET", "/v0/agents/:agentId/logs/stream", {
      summary: "Follow the agent gateway's log (server-sent events)",
      description: "First the last `lines` lines (100 by default; 0 for none), then each new line as it is written: " +
        "`event: log`, `data: {timestamp, level, source, message}`; a chunk's last event has an `id`, and a client " +
        "that reconnects with `Last-Event-ID` gets what came after it (lines of a chunk it had not finished may come " +
        "twice). A comment line keeps an idle stream open; the stream ends when the agent is deleted.",
      query: LinesQuery,
      response: { contentType: "text/event-stream" },
      errors
    }, ({ principal, agentId, request }) =>
      Effect.gen(function*() {
        const resumeFrom = Number(request.headers["last-event-id"] ?? Number.NaN)
        // The first read answers the request's errors (no such agent, a bad `lines`) before the stream begins.
        const first = Number.isInteger(resumeFrom) && resumeFrom >= 0
          ? yield* agents.logsAfter(principal, agentId, resumeFrom)
          : yield* agents.recentLogs(principal, agentId, Kit.query(request, "lines"), 0)
        const follow = Stream.paginate({ cursor: first.cursor, idle: 0 }, (state) =>
          Effect.gen(function*() {
            const chunk = yield* agents.logsAfter(principal, agentId, state.cursor)
            if (chunk.entries.length > 0) return [events(chunk), Option.some({ cursor: chunk.cursor, idle: 0 })] as const
            yield* Effect.sleep(pollInterval)
            const idle = state.idle + 1
            return idle >= keepAliveEvery
              ? [[": keep-alive\n\n"], Option.some({ cursor: chunk.cursor, idle: 0 })] as const
              : [[], Option.some({ cursor: chunk.cursor, idle })] as const
          }))
        const body = Stream.concat(Stream.fromIterable([": following the gateway's log\n\n", ...events(first)]), follow).pipe(
          // The agent deleted (or the engine failing) ends the stream; the client sees it close.
          Stream.catchCause(() => Stream.empty),
          Stream.encodeText
        )
        return HttpServerResponse.stream(body, {
          contentType: "text/event-stream",
          headers: { "cache-control": "no-store", "x-accel-buffering": "no" }
        })
      }))
  })
)
