/**
 * A workspace's audit feed (issue 37, decision 0050): every event recorded for the workspace, in log order, as it
 * is recorded. `follow` is the stream `GET /v0/audit/stream` serves (server-sent events that resume exactly after a
 * position); webhooks get the same entries POSTed one at a time, in order, signed with HMAC-SHA256 under a key
 * sealed in the workspace's vault, retried with backoff until the receiver answers 2xx, and resumed after a restart
 * from the position each webhook was delivered up to (`cairn_audit_webhook_cursors`). Which workspace an event is
 * of: EventOwners.ts.
 */
import { Audit, ValidationFailed } from "@cairn/domain"
import { compare, EventStore, formatPosition, type LogPosition, parsePosition, type RecordedEvent, start } from "@cairn/event-store"
import { Clock, Context, Duration, Effect, FiberMap, Layer, Option, Redacted, Stream } from "effect"
import * as Hex from "effect/encoding/Hex"
import { SqlClient } from "effect/sql"
import type { Principal } from "../Access.ts"
import { AgentsNode } from "../cluster/NodeLeases.ts"
import { CommandHandler } from "../CommandHandler.ts"
import { now } from "../Now.ts"
import * as AuditWebhooksTable from "../readmodels/AuditWebhooksTable.ts"
import { createTogether } from "../SchemaSetup.ts"
import { SecretVault } from "../secrets/SecretVault.ts"
import * as EventOwners from "./EventOwners.ts"

/** One event as the feed shows it. `id` is its log position, the opaque cursor a client resumes after. */
export interface AuditEntry {
  readonly id: string
  readonly type: string
  readonly at: string
  readonly actor: string | null
  readonly stream: string
  readonly version: number
  readonly data: unknown
}

export const entryOf = (event: RecordedEvent): AuditEntry => ({
  id: formatPosition(event.position),
  type: event.type,
  at: event.recordedAt.toISOString(),
  actor: event.metadata.actor ?? null,
  stream: event.stream,
  version: event.version,
  data: Audit.shownData(event.data)
})

/** A cursor a client gave back (`Last-Event-ID`, `?after=`): an entry's `id`, or `0` for the log's start. */
export const parseCursor = (text: string): Option.Option<LogPosition> => Option.fromNullishOr(parsePosition(text))

/** How a failed delivery is retried: after `baseMillis`, doubling each time, at most `maxMillis` apart. */
export const AuditWebhookBackoff = Context.Reference<{ readonly baseMillis: number; readonly maxMillis: number; readonly timeoutMillis: number }>(
  "cairn/AuditWebhookBackoff",
  { defaultValue: () => ({ baseMillis: 500, maxMillis: 60_000, timeoutMillis: 10_000 }) }
)

/** A webhook as its workspace sees it (never its key). */
export interface AuditWebhookView {
  readonly id: string
  readonly url: string
  readonly createdAt: string
  /** The last entry delivered (its `id`), or null before the first. */
  readonly deliveredUpTo: string | null
}

const batchSize = 500
const pollMillis = 500

const encoder = new TextEncoder()
// WebCrypto's own type, named through the global `crypto` (no DOM lib and no `node:` import here).
type CryptoKey = Awaited<ReturnType<typeof crypto.subtle.importKey>>
const hex = (bytes: ArrayBuffer) => Hex.encode(new Uint8Array(bytes))
const base64url = (bytes: Uint8Array) =>
  btoa(Array.from(bytes, (b) => String.fromCharCode(b)).join("")).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "")

export class AuditFeed extends Context.Service<AuditFeed>()("cairn/AuditFeed", {
  make: Effect.gen(function*() {
    const store = yield* EventStore
    const sql = yield* SqlClient.SqlClient
    const commands = yield* CommandHandler
    const vault = yield* SecretVault
    const webhooks = AuditWebhooksTable.queries(sql)
    const node = yield* AgentsNode
    yield* createTogether(sql, sql`CREATE TABLE IF NOT EXISTS cairn_audit_webhook_cursors (
      webhook_id text PRIMARY KEY, position text NOT NULL, delivered bigint NOT NULL DEFAULT 0,
      node text NOT NULL, lease_until timestamptz NOT NULL, updated_at timestamptz NOT NULL DEFAULT now())`).pipe(Effect.orDie)

    const { isOf } = EventOwners.make(store)

    /**
     * The workspace's events after `after`, in log order, then each new one as it is recorded. Never ends by itself.
     * The log is read in its final order (`readAll`), so resuming after an entry's `id` neither skips nor repeats one.
     */
    const follow = (workspaceId: string, after: LogPosition): Stream.Stream<AuditEntry, unknown> => {
      let cursor = after
      const belongs = isOf(workspaceId)
      const nextBatch = Effect.gen(function*() {
        for (;;) {
          const seen = yield* store.appendCount
          const events = yield* store.readAll({ after: cursor, limit: batchSize })
          if (events.length === 0) {
            yield* store.awaitAppend(seen, pollMillis)
            continue
          }
          cursor = events[events.length - 1]!.position
          const mine = yield* Effect.filter(events, belongs)
          if (mine.length > 0) return mine.map(entryOf)
        }
      })
      return Stream.fromEffectRepeat(nextBatch).pipe(Stream.flatMap(Stream.fromIterable))
    }

    const stream = (principal: Principal, after: LogPosition) => follow(principal.workspaceId, after)

    const cursorOf = (webhookId: string) =>
      sql<{ readonly position: string }>`SELECT position FROM cairn_audit_webhook_cursors WHERE webhook_id = ${webhookId}`.pipe(
        Effect.orDie,
        Effect.map(([row]) => Option.flatMap(Option.fromNullishOr(row), (r) => parseCursor(r.position)))
      )

    /**
     * Takes the webhook's deliveries for this node, at the position they stopped (`initial` for a webhook never
     * delivered to): none when another node holds them and its lease has not run out.
     */
    const claim = (webhookId: string, initial: LogPosition) =>
      sql<{ readonly position: string }>`INSERT INTO cairn_audit_webhook_cursors (webhook_id, position, node, lease_until)
        VALUES (${webhookId}, ${formatPosition(initial)}, ${node}, now() + interval '120 seconds')
        ON CONFLICT (webhook_id) DO UPDATE SET node = EXCLUDED.node, lease_until = EXCLUDED.lease_until
        WHERE cairn_audit_webhook_cursors.node = EXCLUDED.node OR cairn_audit_webhook_cursors.lease_until < now()
        RETURNING position`.pipe(
        Effect.orDie,
        Effect.map(([row]) => Option.flatMap(Option.fromNullishOr(row), (r) => parseCursor(r.position)))
      )

    /** Moves the cursor (and the lease) on; false when this node no longer holds the webhook. */
    const saveCursor = (webhookId: string, position: LogPosition, delivered: number) =>
      sql`UPDATE cairn_audit_webhook_cursors SET position = ${formatPosition(position)}, delivered = delivered + ${delivered},
        lease_until = now() + interval '120 seconds', updated_at = now()
        WHERE webhook_id = ${webhookId} AND node = ${node} RETURNING webhook_id`.pipe(Effect.orDie, Effect.map((rows) => rows.length > 0))

    /** Keeps the lease while nothing moves (waiting for events, retrying); false when it was lost. */
    const renew = (webhookId: string) =>
      sql`UPDATE cairn_audit_webhook_cursors SET lease_until = now() + interval '120 seconds'
        WHERE webhook_id = ${webhookId} AND node = ${node} RETURNING webhook_id`.pipe(Effect.orDie, Effect.map((rows) => rows.length > 0))

    const list = (principal: Principal) =>
      Effect.gen(function*() {
        const rows = yield* webhooks.inWorkspace(principal.workspaceId)
        return yield* Effect.forEach(rows, (row) =>
          Effect.map(cursorOf(row.id), (cursor): AuditWebhookView => ({
            id: row.id,
            url: row.url,
            createdAt: row.createdAt,
            deliveredUpTo: Option.match(cursor, { onNone: () => null, onSome: formatPosition })
          })))
      })

    /** Registers a webhook; its signing key is in the answer, and only there (sealed in the event). */
    const register = Effect.fn("AuditFeed.register")(function*(principal: Principal, input: { readonly url: unknown }) {
      const url = Audit.checkUrl(input.url)
      if (url instanceof ValidationFailed) return yield* url
      const webhookId = crypto.randomUUID()
      const secret = `whsec_${base64url(crypto.getRandomValues(new Uint8Array(32)))}`
      const sealed = yield* vault.seal(principal.workspaceId, webhookId, 1, Redacted.make(secret))
      const at = yield* now
      yield* commands.execute(Audit.decider, Audit.stream(principal.workspaceId), new Audit.RegisterAuditWebhook({
        webhookId,
        workspaceId: principal.workspaceId,
        userId: principal.userId,
        url,
        sealed,
        at
      }), { actor: principal.userId })
      return { webhook: { id: webhookId, url, createdAt: at, deliveredUpTo: null } satisfies AuditWebhookView, secret }
    })

    const remove = Effect.fn("AuditFeed.remove")(function*(principal: Principal, webhookId: string) {
      const at = yield* now
      yield* commands.execute(Audit.decider, Audit.stream(principal.workspaceId), new Audit.RemoveAuditWebhook({
        webhookId,
        workspaceId: principal.workspaceId,
        at
      }), { actor: principal.userId })
      yield* sql`DELETE FROM cairn_audit_webhook_cursors WHERE webhook_id = ${webhookId}`.pipe(Effect.orDie)
    })

    /** Where a webhook's deliveries begin: just after the event that registered it. */
    const registeredAt = (webhook: AuditWebhooksTable.AuditWebhookRow) =>
      Effect.map(store.readStream(Audit.stream(webhook.workspaceId)), (events) =>
        events.find((e) => e.type === "AuditWebhookRegistered" && (e.data as { readonly webhookId?: unknown }).webhookId === webhook.id)
          ?.position ?? start)

    /**
     * POSTs one entry until the receiver answers 2xx, waiting longer after each failure; false if this node lost the
     * webhook meanwhile (the lease outlives the longest wait, and is renewed before each attempt).
     */
    const deliver = (webhook: AuditWebhooksTable.AuditWebhookRow, key: CryptoKey, entry: AuditEntry) =>
      Effect.gen(function*() {
        const backoff = yield* AuditWebhookBackoff
        for (let attempt = 1;; attempt++) {
          if (attempt > 1 && !(yield* renew(webhook.id))) return false
          const timestamp = String(Math.floor((yield* Clock.currentTimeMillis) / 1000))
          const body = JSON.stringify({ ...entry, webhookId: webhook.id, timestamp })
          const signature = hex(yield* Effect.promise(() => crypto.subtle.sign("HMAC", key, encoder.encode(body))))
          const outcome = yield* Effect.tryPromise(async () => {
            const response = await fetch(webhook.url, {
              method: "POST",
              redirect: "manual",
              signal: AbortSignal.timeout(backoff.timeoutMillis),
              headers: {
                "content-type": "application/json",
                "user-agent": "Cairn-Audit-Webhook/1",
                "x-cairn-event-id": entry.id,
                "x-cairn-event-type": entry.type,
                "x-cairn-webhook-id": webhook.id,
                "x-cairn-timestamp": timestamp,
                "x-cairn-delivery-attempt": String(attempt),
                "x-cairn-signature": `sha256=${signature}`
              },
              body
            })
            await response.body?.cancel()
            return response.status
          }).pipe(Effect.match({ onFailure: (error) => `unreachable (${String((error.cause as Error | undefined)?.message ?? error.cause)})`, onSuccess: (status) => status }))
          if (typeof outcome === "number" && outcome >= 200 && outcome < 300) return true
          const wait = Math.min(backoff.maxMillis, backoff.baseMillis * 2 ** Math.min(attempt - 1, 30))
          yield* Effect.logWarning(`Audit webhook ${webhook.id}: delivery of ${entry.id} failed (${typeof outcome === "number" ? `HTTP ${outcome}` : outcome}), attempt ${attempt}; retrying in ${wait} ms`)
          yield* Effect.sleep(Duration.millis(wait))
        }
      })

    /** Delivers the workspace's events to one webhook, in order, from where it stopped, for as long as it is registered. */
    const deliverTo = (webhook: AuditWebhooksTable.AuditWebhookRow) =>
      Effect.gen(function*() {
        const secret = yield* vault.open(webhook.workspaceId, webhook.id, 1, webhook.sealed)
        const key = yield* Effect.promise(() =>
          crypto.subtle.importKey("raw", encoder.encode(Redacted.value(secret)), { name: "HMAC", hash: "SHA-256" }, false, ["sign"])
        )
        const initial = yield* cursorOf(webhook.id).pipe(Effect.flatMap(Option.match({ onSome: Effect.succeed, onNone: () => registeredAt(webhook) })))
        let cursor = initial
        // Another node delivers to it while its lease runs; this one takes over once it has run out.
        for (;;) {
          const claimed = yield* claim(webhook.id, initial)
          if (Option.isSome(claimed)) {
            cursor = claimed.value
            break
          }
          yield* Effect.sleep(Duration.seconds(10))
        }
        const belongs = isOf(webhook.workspaceId)
        let renewed = Date.now()
        for (;;) {
          const seen = yield* store.appendCount
          const events = yield* store.readAll({ after: cursor, limit: batchSize })
          if (events.length === 0) {
            if (Date.now() - renewed > 10_000) {
              if (!(yield* renew(webhook.id))) return
              renewed = Date.now()
            }
            yield* store.awaitAppend(seen, pollMillis)
            continue
          }
          for (const event of events) {
            // Its own removal is where it ends (the row went in the same append).
            if (event.type === "AuditWebhookRemoved" && (event.data as { readonly webhookId?: unknown }).webhookId === webhook.id) return
            if (yield* belongs(event)) {
              if (!(yield* deliver(webhook, key, entryOf(event)))) return
              if (!(yield* saveCursor(webhook.id, event.position, 1))) return
            }
          }
          const last = events[events.length - 1]!.position
          if (compare(last, cursor) > 0) {
            if (!(yield* saveCursor(webhook.id, last, 0))) return
            cursor = last
          }
          renewed = Date.now()
        }
      })

    /**
     * The delivery worker, for as long as the server runs: one fiber per registered webhook, started within a second
     * of its registration (or at the server's start), stopped when it is removed, started again if it failed.
     */
    const run = Effect.gen(function*() {
      const fibers = yield* FiberMap.make<string>()
      // A webhook whose deliveries failed (its key unreadable, the database away) is started again a minute later.
      const failedUntil = new Map<string, number>()
      const reconcile = Effect.gen(function*() {
        const rows = yield* webhooks.all
        const ids = new Set(rows.map((row) => row.id))
        for (const [id] of [...fibers]) if (!ids.has(id)) yield* FiberMap.remove(fibers, id)
        for (const id of failedUntil.keys()) if (!ids.has(id)) failedUntil.delete(id)
        const time = yield* Clock.currentTimeMillis
        for (const row of rows) {
          if ((failedUntil.get(row.id) ?? 0) > time) continue
          yield* FiberMap.run(fibers, row.id, deliverTo(row).pipe(
            Effect.catchCause((cause) =>
              Effect.logError(`Audit webhook ${row.id}: delivery stopped, starting again in a minute`, cause).pipe(
                Effect.andThen(Clock.currentTimeMillis),
                Effect.map((at) => void failedUntil.set(row.id, at + 60_000))
              ))
          ), { onlyIfMissing: true })
        }
      })
      yield* reconcile.pipe(
        Effect.catchCause((cause) => Effect.logError("Audit webhooks: reading the registrations failed", cause)),
        Effect.andThen(Effect.sleep(Duration.seconds(1))),
        Effect.forever
      )
    }).pipe(Effect.scoped)

    return { stream, follow, list, register, remove, run }
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
