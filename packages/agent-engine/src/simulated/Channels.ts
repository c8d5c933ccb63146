/**
 * The simulated gateway's messaging channels: the specs set for the next start, and those the running gateway was
 * launched with (a real gateway reads its config and environment once, at start). A channel runs when it is
 * enabled, the gateway runs, and the launch's environment held every token it needs; WhatsApp is never linked
 * (no phone scans a QR code in a simulation). DM pairing is kept as OpenClaw keeps it: a sender asking again keeps
 * their code, a request is forgotten an hour after it was made, and an approved sender joins the channel's allow store.
 */
import type { Channel } from "@cairn/domain"
import type { ChannelPairingRequest, ChannelSpec, ChannelStatus } from "../Channels.ts"
import { tokenVariable } from "../Channels.ts"

export interface ChannelStore {
  /** What the next launch takes. */
  next: ReadonlyArray<ChannelSpec>
  /** What the current (or last) launch took, with which token variables it found set. */
  launched: ReadonlyArray<{ readonly spec: ChannelSpec; readonly tokensAvailable: boolean }>
  /** Each channel's pending pairing requests, oldest first (with when each was made, in ms), and approved senders. */
  readonly pairing: Map<Channel.ChannelName, { pending: Array<ChannelPairingRequest & { readonly atMs: number }>; readonly approved: Array<string> }>
}

export const empty = (): ChannelStore => ({ next: [], launched: [], pairing: new Map() })

/** OpenClaw forgets a pairing request an hour after it was made. */
export const pairingTtlMs = 3_600_000

/** OpenClaw's code alphabet (no I, O, 0, 1). */
const codeAlphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"

/** The n-th code a simulation hands out: deterministic, 8 characters of OpenClaw's alphabet. */
export const pairingCode = (n: number) => {
  let code = ""
  for (let rest = n + 32 ** 7, i = 0; i < 8; i++, rest = Math.floor(rest / 32)) code = codeAlphabet[rest % 32] + code
  return code
}

const pairingOf = (store: ChannelStore, channel: Channel.ChannelName) => {
  let entry = store.pairing.get(channel)
  if (entry === undefined) store.pairing.set(channel, entry = { pending: [], approved: [] })
  return entry
}

/** Drops the requests older than an hour, as OpenClaw does whenever it reads them. */
const prune = (store: ChannelStore, channel: Channel.ChannelName, nowMs: number) => {
  const entry = pairingOf(store, channel)
  entry.pending = entry.pending.filter((request) => nowMs - request.atMs <= pairingTtlMs)
  return entry
}

/** A sender writes to the bot: their pending request's code (a new one for a new sender, made with `nextCode`). */
export const requestPairing = (store: ChannelStore, channel: Channel.ChannelName, senderId: string, nowMs: number, nextCode: () => string) => {
  const entry = prune(store, channel, nowMs)
  const known = entry.pending.find((request) => request.senderId === senderId)
  if (known !== undefined) return known.code
  const createdAt = new Date(nowMs).toISOString()
  const code = nextCode()
  entry.pending.push({ code, senderId, createdAt, expiresAt: new Date(nowMs + pairingTtlMs).toISOString(), atMs: nowMs })
  return code
}

export const pendingPairing = (store: ChannelStore, channel: Channel.ChannelName, nowMs: number): ReadonlyArray<ChannelPairingRequest> =>
  prune(store, channel, nowMs).pending.map(({ atMs: _, ...request }) => request)

/** Approves the pending request with `code`: its sender, or undefined when no pending request has it. */
export const approvePairing = (store: ChannelStore, channel: Channel.ChannelName, code: string, nowMs: number) => {
  const entry = prune(store, channel, nowMs)
  const index = entry.pending.findIndex((request) => request.code === code.toUpperCase())
  if (index < 0) return undefined
  const [request] = entry.pending.splice(index, 1)
  if (!entry.approved.includes(request!.senderId)) entry.approved.push(request!.senderId)
  return request!.senderId
}

export const approvedSenders = (store: ChannelStore, channel: Channel.ChannelName): ReadonlyArray<string> =>
  [...pairingOf(store, channel).approved]

/** Copies the specs into a launch, as a gateway reads its config and environment when it starts. */
export const launch = (store: ChannelStore, environment: Readonly<Record<string, string>>) => {
  store.launched = store.next.map((spec) => ({
    spec,
    tokensAvailable: spec.tokens.every((kind) => (environment[tokenVariable(spec.channel, kind)] ?? "") !== "")
  }))
}

/** The channels as the gateway reports them: the configured ones (for the next start), and whether each runs now. */
export const status = (store: ChannelStore, gatewayRunning: boolean): ReadonlyArray<ChannelStatus> =>
  store.next.map((spec): ChannelStatus => {
    const launched = store.launched.find((l) => l.spec.channel === spec.channel)
    const tokensAvailable = launched?.tokensAvailable ?? false
    return {
      channel: spec.channel,
      configured: true,
      running: gatewayRunning && launched !== undefined && launched.spec.enabled && tokensAvailable,
      ...(spec.tokens.length === 0 ? {} : { tokenStatus: tokensAvailable ? "available" : "missing" }),
      ...(spec.channel === "whatsapp" ? { linked: false } : {})
    }
  })
