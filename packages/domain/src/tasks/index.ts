/**
 * Scheduled tasks (the engine's cron, driven through the AgentEngine port): the rules on what users send
 * (Spec.ts), the documented refusals, and the record of what users did to an agent's tasks through Cairn, for
 * audit. The tasks themselves live in the engine; stream `agenttasks-<agentId>` holds the record.
 */
import type { Decider } from "../Decider.ts"
import type { TaskCommand } from "./Commands.ts"
import { decide } from "./Decide.ts"
import type { TaskError } from "./Errors.ts"
import { TaskEvent } from "./Events.ts"
import { evolve } from "./Evolve.ts"
import { initial, type TasksState } from "./State.ts"

export * from "./Commands.ts"
export { decide, type Decision } from "./Decide.ts"
export * from "./Errors.ts"
export * from "./Events.ts"
export { evolve } from "./Evolve.ts"
export * from "./Spec.ts"
export * from "./State.ts"

export const stream = (agentId: string) => `agenttasks-${agentId}`

export const decider: Decider<TaskCommand, TaskEvent, TasksState, TaskError> = { initial, decide, evolve, events: TaskEvent }
