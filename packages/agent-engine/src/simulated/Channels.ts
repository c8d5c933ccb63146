/**
 * The simulated gateway's messaging channels: the specs set for the next start, and those the running gateway was
 * launched with (a real gateway reads its config and environment once, at start). A channel runs when it is
 * enabled, the gateway runs, and the launch's environment held every token it needs. WhatsApp links as OpenClaw's
 * QR login does: a login hands out a code and waits for a phone to scan it (the control's `scanWhatsAppQr`), for
 * three minutes, and the link then stays (it is kept in the agent's home). DM pairing is kept as OpenClaw keeps it: a sender asking again keeps
 * their code, a request is forgotten an hour after it was made, and an approved sender joins the channel's allow store.
 */
import type { Channel } from "@cairn/domain"
import type { ChannelPairingRequest, ChannelSpec, ChannelStatus, WhatsAppLink } from "../Channels.ts"
import { tokenVariable } from "../Channels.ts"

export interface ChannelStore {
  /** What the next launch takes. */
  next: ReadonlyArray<ChannelSpec>
  /** What the current (or last) launch took, with which token variables it found set. */
  launched: ReadonlyArray<{ readonly spec: ChannelSpec; readonly tokensAvailable: boolean }>
  /** Each channel's pending pairing requests, oldest first (with when each was made, in ms), and approved senders. */
  readonly pairing: Map<Channel.ChannelName, { pending: Array<ChannelPairingRequest & { readonly atMs: number }>; readonly approved: Array<string> }>
  /** WhatsApp's link: whether a phone is linked, the login under way, and how the last one ended, until it is read. */
  readonly whatsapp: {
    linked: boolean
    login: WhatsAppLogin | undefined
    ended: WhatsAppLink | undefined
    failNext: string | undefined
    /** How many logins were begun: the next one's code holds this number (whatsAppQr). */
    logins: number
  }
}

/** A QR login under way: the code it shows (what the QR holds, and its image), since when. */
export interface WhatsAppLogin {
  readonly qr: string
  readonly qrDataUrl: string
  readonly startedAtMs: number
}

export const empty = (): ChannelStore => ({
  next: [],
  launched: [],
  pairing: new Map(),
  whatsapp: { linked: false, login: undefined, ended: undefined, failNext: undefined, logins: 0 }
})

/** What the QR code of the agent's n-th WhatsApp login holds (WhatsApp's own is a `ref,key,key,key` string). */
export const whatsAppQr = (agentId: string, n: number) => `2@simulated,${agentId},${n}`

/** OpenClaw drops a QR login three minutes after it began (ACTIVE_LOGIN_TTL_MS). */
export const whatsAppLoginTtlMs = 180_000

/** Whether the running gateway runs WhatsApp: OpenClaw's QR login is there only then. */
export const runsWhatsApp = (store: ChannelStore) =>
  store.launched.some(({ spec }) => spec.channel === "whatsapp" && spec.enabled)

/**
 * A new login or the one under way, as `web.login.start` answers: `linked` when a phone is (unless `force`, which
 * unlinks it first), the current code of a login still fresh, else `next` as a new login.
 */
export const startWhatsAppLogin = (store: ChannelStore, force: boolean, next: WhatsAppLogin): WhatsAppLink => {
  const whatsapp = store.whatsapp
  if (whatsapp.linked && !force) return { status: "linked", message: "WhatsApp is already linked." }
  if (force) whatsapp.linked = false
  whatsapp.ended = undefined
  const failure = whatsapp.failNext
  if (failure !== undefined) {
    whatsapp.failNext = undefined
    return { status: "failed", message: `Failed to get QR: ${failure}` }
  }
  const current = whatsapp.login
  if (current === undefined || next.startedAtMs - current.startedAtMs >= whatsAppLoginTtlMs) {
    whatsapp.login = next
    whatsapp.logins++
  }
  return { status: "waiting", message: "Scan this QR in WhatsApp → Linked Devices.", qrDataUrl: whatsapp.login!.qrDataUrl }
}

/** A phone scans the login's code: linked. False when no login waits. */
export const scanWhatsAppQr = (store: ChannelStore) => {
  const whatsapp = store.whatsapp
  if (whatsapp.login === undefined) return false
  whatsapp.login = undefined
  whatsapp.linked = true
  whatsapp.ended = { status: "linked", message: "Linked! WhatsApp is ready." }
  return true
}

/**
 * The login under way fails with `reason` (the phone's scan was refused), or, with none under way, the next one
 * does (WhatsApp could not be reached).
 */
export const failWhatsAppLogin = (store: ChannelStore, reason: string) => {
  const whatsapp = store.whatsapp
  if (whatsapp.login === undefined) {
    whatsapp.failNext = reason
    return
  }
  whatsapp.login = undefined
  whatsapp.ended = { status: "failed", message: `WhatsApp login failed: ${reason}` }
}

/** Where the link stands, as `web.login.wait` answers (an end is told once), then the channel's `linked`. */
export const whatsAppLink = (store: ChannelStore, nowMs: number): WhatsAppLink => {
  const whatsapp = store.whatsapp
  const ended = whatsapp.ended
  if (ended !== undefined) {
    whatsapp.ended = undefined
    return ended
  }
  const login = whatsapp.login
  if (login !== undefined) {
    if (nowMs - login.startedAtMs < whatsAppLoginTtlMs) {
      return { status: "waiting", message: "Scan this QR in WhatsApp → Linked Devices.", qrDataUrl: login.qrDataUrl }
    }
    whatsapp.login = undefined
    return { status: "expired", message: "The login QR expired." }
  }
  return whatsapp.linked
    ? { status: "linked", message: "WhatsApp is linked." }
    : { status: "not_started", message: "No active WhatsApp login in progress." }
}

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
      ...(spec.channel === "whatsapp" ? { linked: store.whatsapp.linked } : {})
    }
  })
