/**
 * DM pairing on an agent's messaging channels: a channel whose `dmPolicy` is `pairing` answers an unknown sender
 * with a code, and the owner approves that code through Cairn. Each approval is recorded for audit (stream
 * `pairings-<agentId>`, part of the agent's trail: agents/AuditStreams.ts). The requests themselves are the
 * gateway's: Cairn asks it. The code's rule (Code.ts) is checked before a code goes anywhere near the engine.
 * WhatsApp pairs differently, a phone scanning a QR code: each link begun through Cairn, and each link made, goes on
 * the same trail.
 */
import type { Decider } from "../Decider.ts"
import type { PairingCommand } from "./Commands.ts"
import { decide } from "./Decide.ts"
import { PairingEvent } from "./Events.ts"
import { evolve } from "./Evolve.ts"
import { initial, type PairingState } from "./State.ts"

export * from "./Code.ts"
export * from "./Commands.ts"
export { decide, type Decision } from "./Decide.ts"
export * from "./Errors.ts"
export * from "./Events.ts"
export { evolve } from "./Evolve.ts"
export * from "./State.ts"

export const stream = (agentId: string) => `pairings-${agentId}`

export const decider: Decider<PairingCommand, PairingEvent, PairingState, never> = { initial, decide, evolve, events: PairingEvent }
