/**
 * A node's warm pool of agent gateways (issue 36 item 2; decision 0058): gateways started ahead, each under the id of
 * an agent not yet created, so that a create takes one that already runs. Stream `agent-pool-<node>`: what was
 * reserved, taken by which workspace's create, or discarded and why; a restart clears what an earlier run left.
 */
import type { Decider } from "../Decider.ts"
import type { PoolCommand } from "./Commands.ts"
import { decide } from "./Decide.ts"
import { PoolEvent } from "./Events.ts"
import { evolve, initial, type PoolState } from "./State.ts"

export * from "./Commands.ts"
export { decide } from "./Decide.ts"
export * from "./Events.ts"
export * from "./State.ts"

export const stream = (node: string) => `agent-pool-${node}`

export const decider: Decider<PoolCommand, PoolEvent, PoolState, never> = { initial, decide, evolve, events: PoolEvent }
