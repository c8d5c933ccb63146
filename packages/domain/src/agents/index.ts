/** Hosted agents: an engine gateway Cairn provisions and supervises for one workspace. Stream `agent-<id>`. */
import type { Decider } from "../Decider.ts"
import type { AgentCommand } from "./Commands.ts"
import { decide } from "./Decide.ts"
import type { AgentError } from "./Errors.ts"
import { AgentEvent } from "./Events.ts"
import { evolve } from "./Evolve.ts"
import { type AgentState, initial } from "./State.ts"

export * from "./Commands.ts"
export { decide, type Decision, visible } from "./Decide.ts"
export * from "./Errors.ts"
export * from "./Events.ts"
export { evolve } from "./Evolve.ts"
export { validateName } from "./Name.ts"
export { type Profile, profileLimits, validateProfile } from "./Profile.ts"
export * from "./Recovery.ts"
export * from "./State.ts"

export const stream = (agentId: string) => `agent-${agentId}`

export const decider: Decider<AgentCommand, AgentEvent, AgentState, AgentError> = { initial, decide, evolve, events: AgentEvent }
