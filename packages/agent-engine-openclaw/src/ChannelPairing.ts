/**
 * DM pairing on an agent's channels, as OpenClaw keeps it (its `src/pairing/pairing-store.ts`, in
 * `<state>/state/openclaw.sqlite`): a sender the channel does not know gets a code of 8 characters and a pending
 * request for an hour; approving it adds the sender to the channel's allow store. The gateway's RPC names a request by
 * an opaque id and never shows its code (`channels.pairing.list`, `channels.pairing.approve`), while the owner holds
 * only the code the bot sent, which `openclaw pairing list <channel> --json` shows. So Cairn lists with the CLI, finds
 * the code's request among the gateway's by its sender and time, and approves that one over the RPC: the CLI's own
 * `pairing approve` would also make the sender the agent's command owner (a config write Cairn does not want).
 */
import type { ChannelPairingRequest } from "@cairn/agent-engine"
import { Effect, Schema } from "effect"

/** OpenClaw forgets a pending request an hour after it was made (CHANNEL_PAIRING_PENDING_TTL_MS). */
export const pendingTtlMs = 3_600_000

/** A request as the CLI prints it: the store's entry (`id` is the sender unless `meta.senderId` says otherwise). */
const StoredRequest = Schema.Struct({
  id: Schema.String,
  code: Schema.String,
  createdAt: Schema.String,
  meta: Schema.optionalKey(Schema.Struct({
    senderId: Schema.optionalKey(Schema.String),
    accountId: Schema.optionalKey(Schema.String)
  }))
})
const CliList = Schema.Struct({ requests: Schema.Array(StoredRequest) })
const decodeCliList = Schema.decodeUnknownEffect(Schema.fromJsonString(CliList))

/** A pending request as Cairn needs it to approve it over the RPC: its sender, account and time name it there. */
export interface StoredPairingRequest extends ChannelPairingRequest {
  readonly accountId: string
}

/** Reads `openclaw pairing list <channel> --json` (notices may come before the JSON); fails with a description. */
export const parseCliList = (stdout: string): Effect.Effect<ReadonlyArray<StoredPairingRequest>, string> => {
  const json = stdout.slice(Math.max(0, stdout.search(/^\{/m)))
  return decodeCliList(json).pipe(
    Effect.map(({ requests }) =>
      requests.map((request): StoredPairingRequest => {
        const createdMs = Date.parse(request.createdAt)
        return {
          code: request.code.toUpperCase(),
          senderId: request.meta?.senderId ?? request.id,
          createdAt: request.createdAt,
          ...(Number.isNaN(createdMs) ? {} : { expiresAt: new Date(createdMs + pendingTtlMs).toISOString() }),
          accountId: (request.meta?.accountId ?? "default").toLowerCase()
        }
      })
    ),
    Effect.mapError((issue) => `unexpected output of pairing list (${issue}): ${stdout.slice(0, 1_000)}`)
  )
}

/** A request as the gateway's `channels.pairing.list` gives it. */
const GatewayRequest = Schema.Struct({
  requestId: Schema.String,
  accountId: Schema.String,
  senderId: Schema.String,
  createdAt: Schema.String
})
const GatewayList = Schema.Struct({ requests: Schema.Array(GatewayRequest) })
const decodeGatewayList = Schema.decodeUnknownEffect(GatewayList)

/**
 * The gateway's id for the stored request (same sender, account and time), undefined when the gateway does not list
 * it (gone meanwhile, or an account the gateway does not run in pairing mode).
 */
export const gatewayRequestId = (answer: unknown, request: StoredPairingRequest): Effect.Effect<string | undefined, string> =>
  decodeGatewayList(answer).pipe(
    Effect.map(({ requests }) =>
      requests.find((listed) =>
        listed.senderId === request.senderId && listed.createdAt === request.createdAt &&
        listed.accountId.toLowerCase() === request.accountId
      )?.requestId
    ),
    Effect.mapError((issue) => `unexpected answer of channels.pairing.list (${issue})`)
  )

/** The gateway's refusal when the request was approved or dismissed meanwhile. */
export const isGone = (message: string) => /no longer exists/.test(message)
