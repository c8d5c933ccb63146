/**
 * An agent's console: shell commands run in its workspace, each recorded for audit (the command, where, how it
 * ended; never its output). Stream `console-<agentId>`, part of the agent's audit trail (agents/AuditStreams.ts).
 */
import type { Decider } from "../Decider.ts"
import type { ConsoleCommand } from "./Commands.ts"
import { decide } from "./Decide.ts"
import type { ConsoleError } from "./Errors.ts"
import { ConsoleEvent } from "./Events.ts"
import { evolve } from "./Evolve.ts"
import { type ConsoleState, initial } from "./State.ts"

export * from "./Commands.ts"
export { decide, type Decision } from "./Decide.ts"
export * from "./Errors.ts"
export * from "./Events.ts"
export { evolve } from "./Evolve.ts"
export * from "./State.ts"
export * from "./Validation.ts"

export const stream = (agentId: string) => `console-${agentId}`

export const decider: Decider<ConsoleCommand, ConsoleEvent, ConsoleState, ConsoleError> = { initial, decide, evolve, events: ConsoleEvent }
