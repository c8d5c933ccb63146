/**
 * The devices paired with an agent's gateway (browsers and phones that opened its Control UI, paired nodes): each
 * approval, rejection and removal made through Cairn, recorded for audit. Stream `devices-<agentId>`, part of the
 * agent's audit trail (agents/AuditStreams.ts). The devices themselves are the gateway's: Cairn asks it.
 */
import type { Decider } from "../Decider.ts"
import type { DeviceCommand } from "./Commands.ts"
import { decide } from "./Decide.ts"
import { DeviceEvent } from "./Events.ts"
import { evolve } from "./Evolve.ts"
import { type DeviceState, initial } from "./State.ts"

export * from "./Commands.ts"
export { decide, type Decision } from "./Decide.ts"
export * from "./Events.ts"
export { evolve } from "./Evolve.ts"
export * from "./State.ts"

export const stream = (agentId: string) => `devices-${agentId}`

export const decider: Decider<DeviceCommand, DeviceEvent, DeviceState, never> = { initial, decide, evolve, events: DeviceEvent }
