/**
 * The simulated gateway's messaging channels: the specs set for the next start, and those the running gateway was
 * launched with (a real gateway reads its config and environment once, at start). A channel runs when it is
 * enabled, the gateway runs, and the launch's environment held every token it needs; WhatsApp is never linked
 * (no phone scans a QR code in a simulation).
 */
import type { ChannelSpec, ChannelStatus } from "../Channels.ts"
import { tokenVariable } from "../Channels.ts"

export interface ChannelStore {
  /** What the next launch takes. */
  next: ReadonlyArray<ChannelSpec>
  /** What the current (or last) launch took, with which token variables it found set. */
  launched: ReadonlyArray<{ readonly spec: ChannelSpec; readonly tokensAvailable: boolean }>
}

export const empty = (): ChannelStore => ({ next: [], launched: [] })

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
