/**
 * What a node's warm pool does (stream `agent-pool-<node>`): a gateway started ahead for an agent that does not exist
 * yet, under the id that agent will have, then taken by that agent's create or discarded, never anyone else's.
 * Stored: the schema only ever grows optional fields.
 */
import { Schema } from "effect"

/** An id and a home reserved for the pool, recorded before anything is made for them (a crash leaves a trace). */
export class PoolGatewayReserved extends Schema.TaggedClass<PoolGatewayReserved>()("PoolGatewayReserved", {
  agentId: Schema.String,
  /** The engine version its gateway runs. */
  version: Schema.String,
  at: Schema.String
}) {}

/** Adopted by the create of the agent with its id (recorded in the same append as that agent's `AgentCreated`). */
export class PoolGatewayTaken extends Schema.TaggedClass<PoolGatewayTaken>()("PoolGatewayTaken", {
  agentId: Schema.String,
  workspaceId: Schema.String,
  at: Schema.String
}) {}

/** Stopped and removed, home and all, without ever being anyone's. */
export class PoolGatewayDiscarded extends Schema.TaggedClass<PoolGatewayDiscarded>()("PoolGatewayDiscarded", {
  agentId: Schema.String,
  /** `failed` (it did not start), `crashed`, `outdated` (a newer engine version is offered), `left` (by an earlier run of Cairn). */
  reason: Schema.Literals(["failed", "crashed", "outdated", "left"]),
  /** What the engine said, where it failed. */
  detail: Schema.optional(Schema.String),
  at: Schema.String
}) {}

export const PoolEvent = Schema.Union([PoolGatewayReserved, PoolGatewayTaken, PoolGatewayDiscarded])
export type PoolEvent = typeof PoolEvent.Type
