/**
 * `/v0/audit`: the workspace's audit feed (issue 37, decision 0050). `GET /v0/audit/stream` is every event recorded
 * for the workspace as server-sent events, resumed exactly after `Last-Event-ID` (or `?after=`); `/v0/audit/webhooks`
 * registers URLs that get each event POSTed, signed, in order, retried until they answer 2xx.
 */
import { AuditFeed, type AuditEntry, AuditLog, parseCursor, parsePoint } from "@cairn/application"
import { Audit, ValidationFailed } from "@cairn/domain"
import { start } from "@cairn/event-store"
import { Effect, Option, Schema, Stream } from "effect"
import { HttpServerResponse } from "effect/http"
import { HttpRouter } from "effect/http"
import * as Kit from "./Kit.ts"

/** A comment line every this often, so that proxies keep an idle stream open. */
const heartbeatMillis = 15_000

const sseOf = (entry: AuditEntry) =>
  `id: ${entry.id}\nevent: ${entry.type}\ndata: ${JSON.stringify({
    type: entry.type,
    at: entry.at,
    actor: entry.actor,
    stream: entry.stream,
    version: entry.version,
    data: entry.data
  })}\n\n`

const WebhookWire = Schema.Struct({
  id: Schema.String,
  url: Schema.String,
  createdAt: Schema.String,
  deliveredUpTo: Schema.NullOr(Schema.String)
})
const RegisterWebhook = Schema.Struct({ url: Schema.optional(Schema.Unknown) })

export const layer = HttpRouter.use((router) =>
  Effect.gen(function*() {
    const { route } = yield* Kit.make(router)
    const audit = yield* AuditFeed
    const auditLog = yield* AuditLog

    yield* route("GET", "/v0/audit/stream", {
      summary: "The workspace's events as server-sent events, as they are recorded",
      description: "Every event recorded for the workspace (its agents, secrets, keys, files, …), in log order, then each new " +
        "one as it is recorded: `id:` the event's position (opaque), `event:` its type, `data:` " +
        "`{type, at, actor, stream, version, data}` (a sealed value's ciphertext is never shown). Resumes exactly after " +
        "the position in `Last-Event-ID` (what EventSource sends when it reconnects) or `?after=`: no event missed, none " +
        "twice; `0` or neither: from the workspace's first event. A `: heartbeat` comment comes every 15 s.",
      query: Schema.Struct({ after: Schema.optional(Schema.String) }),
      headers: [{ name: "Last-Event-ID", description: "The `id` of the last event received: the stream resumes after it" }],
      response: { contentType: "text/event-stream", description: "The events as server-sent events" },
      errors: [new ValidationFailed({ detail: "Last-Event-ID is not an event id of this stream" })]
    }, ({ principal, request }) =>
      Effect.gen(function*() {
        const given = request.headers["last-event-id"] ?? Kit.query(request, "after") ?? undefined
        const after = given === undefined || given === "" ? Option.some(start) : parseCursor(given.trim())
        if (Option.isNone(after)) return yield* new ValidationFailed({ detail: "Last-Event-ID is not an event id of this stream" })
        const events = audit.stream(principal, after.value).pipe(
          Stream.map(sseOf),
          Stream.catchCause((cause) => Stream.fromEffect(Effect.logError("Audit stream failed", cause).pipe(Effect.as(": error\n\n"))))
        )
        const heartbeats = Stream.tick(heartbeatMillis).pipe(Stream.drop(1), Stream.map(() => ": heartbeat\n\n"))
        const body = Stream.concat(Stream.succeed(": audit stream\n\n"), Stream.merge(events, heartbeats, { haltStrategy: "left" }))
        return HttpServerResponse.stream(Stream.encodeText(body), {
          contentType: "text/event-stream",
          headers: { "cache-control": "no-store", "x-accel-buffering": "no" }
        })
      }))

    yield* route("GET", "/v0/audit/export", {
      summary: "The workspace's sealed events with their proofs, as a CAR a third party checks offline",
      description: "Every event of the workspace recorded after `since` (an event's `id` from the audit stream, `0`, or an ISO " +
        "time; the start when omitted) and sealed (within about a second of being recorded), each with the block it was " +
        "sealed in: the block's signed header and its leaves. The format, and the program that checks a file offline " +
        "(`examples/verify-audit-export`), are in docs/audit-proofs.md. A sealed secret's ciphertext is left out; the " +
        "event's data then comes with the hash it was sealed under.",
      query: Schema.Struct({ since: Schema.optional(Schema.String) }),
      response: { contentType: "application/vnd.ipld.car", description: "A CAR (v1) of JSON blocks: a manifest, one seal per block, an end" },
      errors: [new ValidationFailed({ detail: "since must be an ISO time with its offset (2026-11-28T14:00:00Z) or a log position transactionId:globalPosition (812:4051)" })]
    }, ({ principal, request }) =>
      Effect.gen(function*() {
        const given = Kit.query(request, "since")?.trim() ?? ""
        // The same points as `?at=` (AgentsAt.parsePoint), and `0` for the start.
        const since = given === "" || given === "0"
          ? { _tag: "Position" as const, position: start }
          : yield* Effect.fromResult(parsePoint(given)).pipe(
            Effect.mapError((error) => new ValidationFailed({ detail: error.detail.replace(/^at /, "since ") }))
          )
        return HttpServerResponse.stream(auditLog.exportCar(principal.workspaceId, since), {
          contentType: "application/vnd.ipld.car",
          headers: {
            "cache-control": "no-store",
            "content-disposition": `attachment; filename="audit-${principal.workspaceId}.car"`
          }
        })
      }))

    yield* route("GET", "/v0/audit/webhooks", {
      summary: "List the workspace's audit webhooks (never their signing keys)",
      response: { schema: Schema.Struct({ webhooks: Schema.Array(WebhookWire) }) }
    }, ({ principal }) => Effect.map(audit.list(principal), (webhooks) => ({ webhooks })))

    yield* route("POST", "/v0/audit/webhooks", {
      summary: "Register an audit webhook: every event of the workspace POSTed to it, signed",
      description: `\`url\`: http or https, at most ${Audit.maxUrlLength} characters; at most ${Audit.maxWebhooks} per workspace. ` +
        "The answer's `secret` is the signing key, shown this once: each delivery is a POST of one event " +
        "(`{id, type, at, actor, stream, version, data, webhookId, timestamp}`) with `X-Cairn-Signature: sha256=<hex " +
        "HMAC-SHA256 of the body under the secret>`, `X-Cairn-Timestamp`, `X-Cairn-Event-Id`. Events come in log order, " +
        "from the registration on; a delivery is retried with backoff until the receiver answers 2xx, and the next waits for it.",
      body: { schema: RegisterWebhook },
      response: { status: 201, schema: Schema.Struct({ webhook: WebhookWire, secret: Schema.String }) },
      errors: [new Audit.TooManyAuditWebhooks({ limit: Audit.maxWebhooks })]
    }, ({ principal, body }) =>
      Effect.gen(function*() {
        const input = yield* body(RegisterWebhook)
        return Kit.created(yield* audit.register(principal, { url: input.url }))
      }))

    yield* route("DELETE", "/v0/audit/webhooks/:webhookId", {
      summary: "Remove an audit webhook: its deliveries stop",
      response: { schema: Kit.Done },
      errors: [new Audit.AuditWebhookNotFound({ webhookId: "" })]
    }, ({ principal, params }) =>
      Effect.map(audit.remove(principal, params["webhookId"] ?? ""), () => ({ success: true, message: "Audit webhook removed" })))
  })
)
