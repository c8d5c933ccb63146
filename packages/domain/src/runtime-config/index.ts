/**
 * An agent's runtime config (the engine's own config file, read and written through the AgentEngine port): the rules
 * on what clients send, the documented refusals, and the record of writes made through Cairn, for audit. The config
 * itself is the engine's; stream `agentconfig-<agentId>` holds only which settings changed and the hashes.
 */
import type { Decider } from "../Decider.ts"
import type { RuntimeConfigCommand } from "./Commands.ts"
import { decide } from "./Decide.ts"
import type { RuntimeConfigError } from "./Errors.ts"
import { RuntimeConfigEvent } from "./Events.ts"
import { evolve } from "./Evolve.ts"
import { initial, type RuntimeConfigState } from "./State.ts"

export * from "./Commands.ts"
export { decide, type Decision } from "./Decide.ts"
export * from "./Errors.ts"
export * from "./Events.ts"
export { evolve } from "./Evolve.ts"
export * from "./Input.ts"
export * from "./State.ts"

export const stream = (agentId: string) => `agentconfig-${agentId}`

export const decider: Decider<RuntimeConfigCommand, RuntimeConfigEvent, RuntimeConfigState, RuntimeConfigError> = {
  initial,
  decide,
  evolve,
  events: RuntimeConfigEvent
}
