/**
 * A hosted agent: an engine gateway Cairn provisions and supervises for one workspace. Stream `agent-<id>`.
 * Status is `starting` until the gateway answers, then `running`; `not_running` when it failed to start, crashed
 * or stopped. A crash puts the agent in recovery: the supervisor starts it again, with growing delays, until it
 * runs (or is deleted); a start the user asked for that fails is final. The gateway token is never stored: it is derived from a server secret and the agent's token
 * generation, which a rotation bumps, so every older token stops working.
 */
import { Result, Schema } from "effect"
import { ValidationFailed } from "../ValidationFailed.ts"

export const AgentStatus = Schema.Literals(["starting", "running", "not_running"])
export type AgentStatus = typeof AgentStatus.Type

export class AgentCreated extends Schema.TaggedClass<AgentCreated>()("AgentCreated", {
  agentId: Schema.String,
  workspaceId: Schema.String,
  userId: Schema.String,
  name: Schema.String,
  engineVersion: Schema.String,
  /** The Cairn node that runs the agent's gateway (absent in events recorded before nodes were named). */
  node: Schema.optionalKey(Schema.String),
  at: Schema.String
}) {}

export class AgentStarted extends Schema.TaggedClass<AgentStarted>()("AgentStarted", {
  agentId: Schema.String,
  engineVersion: Schema.String,
  node: Schema.optionalKey(Schema.String),
  at: Schema.String
}) {}

export class AgentFailedToStart extends Schema.TaggedClass<AgentFailedToStart>()("AgentFailedToStart", {
  agentId: Schema.String,
  logTail: Schema.String,
  at: Schema.String
}) {}

export class AgentStopped extends Schema.TaggedClass<AgentStopped>()("AgentStopped", {
  agentId: Schema.String,
  reason: Schema.Literals(["crashed", "stopped"]),
  at: Schema.String
}) {}

/** The supervisor will start a crashed agent again after `delayMs` (attempt 0 is the first try after the crash). */
export class AgentRecoveryScheduled extends Schema.TaggedClass<AgentRecoveryScheduled>()("AgentRecoveryScheduled", {
  agentId: Schema.String,
  attempt: Schema.Int,
  delayMs: Schema.Int,
  at: Schema.String
}) {}

export class AgentRestartRequested extends Schema.TaggedClass<AgentRestartRequested>()("AgentRestartRequested", {
  agentId: Schema.String,
  engineVersion: Schema.String,
  at: Schema.String
}) {}

export class GatewayTokenRotated extends Schema.TaggedClass<GatewayTokenRotated>()("GatewayTokenRotated", {
  agentId: Schema.String,
  generation: Schema.Int,
  at: Schema.String
}) {}

export class AgentDeleted extends Schema.TaggedClass<AgentDeleted>()("AgentDeleted", {
  agentId: Schema.String,
  at: Schema.String
}) {}

export const AgentEvent = Schema.Union([
  AgentCreated, AgentStarted, AgentFailedToStart, AgentStopped, AgentRecoveryScheduled, AgentRestartRequested, GatewayTokenRotated,
  AgentDeleted
])
export type AgentEvent = typeof AgentEvent.Type

export class AgentNotFound extends Schema.TaggedError<AgentNotFound>()("AgentNotFound", { agentId: Schema.String }) {
  readonly status = 404
  override get message() {
    return "Agent not found"
  }
}

export interface Agent {
  readonly agentId: string
  readonly workspaceId: string
  readonly userId: string
  readonly name: string
  readonly engineVersion: string
  readonly status: AgentStatus
  readonly tokenGeneration: number
  /** Crashed, and the supervisor is bringing it back. */
  readonly recovering: boolean
  /** The Cairn node whose engine runs the gateway; only that node supervises it. */
  readonly node: string | null
  readonly createdAt: string
}

export type AgentState =
  | { readonly _tag: "NoAgent" }
  | { readonly _tag: "Live"; readonly agent: Agent }
  | { readonly _tag: "Deleted"; readonly agent: Agent }

export const initial: AgentState = { _tag: "NoAgent" }

const live = (state: AgentState, change: (agent: Agent) => Agent): AgentState =>
  state._tag === "Live" ? { _tag: "Live", agent: change(state.agent) } : state

export const evolve = (state: AgentState, event: AgentEvent): AgentState => {
  switch (event._tag) {
    case "AgentCreated":
      return {
        _tag: "Live",
        agent: {
          agentId: event.agentId,
          workspaceId: event.workspaceId,
          userId: event.userId,
          name: event.name,
          engineVersion: event.engineVersion,
          status: "starting",
          tokenGeneration: 0,
          recovering: false,
          node: event.node ?? null,
          createdAt: event.at
        }
      }
    case "AgentStarted":
      return live(state, (a) => ({ ...a, status: "running", engineVersion: event.engineVersion, recovering: false, node: event.node ?? a.node }))
    case "AgentFailedToStart":
      return live(state, (a) => ({ ...a, status: "not_running" }))
    case "AgentStopped":
      return live(state, (a) => ({ ...a, status: "not_running", recovering: a.recovering || event.reason === "crashed" }))
    case "AgentRecoveryScheduled":
      return live(state, (a) => ({ ...a, recovering: true }))
    case "AgentRestartRequested":
      return live(state, (a) => ({ ...a, status: "starting" }))
    case "GatewayTokenRotated":
      return live(state, (a) => ({ ...a, tokenGeneration: event.generation }))
    case "AgentDeleted":
      return state._tag === "Live" ? { _tag: "Deleted", agent: state.agent } : state
  }
}

export const stream = (agentId: string) => `agent-${agentId}`

export interface RecoveryBackoff {
  readonly initialMs: number
  readonly maxMs: number
}

/**
 * How long the supervisor waits before recovery attempt `attempt` of a crash that is the `recentCrashes`-th in a
 * row (crashes close together): doubling from `initialMs`, capped at `maxMs`, so a gateway that keeps crashing
 * costs less and less CPU.
 */
export const recoveryDelay = (backoff: RecoveryBackoff, recentCrashes: number, attempt: number): number =>
  Math.min(backoff.maxMs, backoff.initialMs * 2 ** Math.min(30, recentCrashes + attempt))

/** The agent as its workspace sees it; another workspace's agent, or a deleted one, is not found. */
export const visible = (state: AgentState, agentId: string, workspaceId: string): Result.Result<Agent, AgentNotFound> =>
  state._tag === "Live" && state.agent.workspaceId === workspaceId
    ? Result.succeed(state.agent)
    : Result.fail(new AgentNotFound({ agentId }))

// Control characters, markup and path separators have no place in a display name.
const banned = /[<>{}\\/`$\u0000-\u001f\u007f]/

/** The documented rules for an agent's name: required, at most 100 characters, no banned characters. */
export const validateName = (name: unknown): Result.Result<string, ValidationFailed> => {
  if (typeof name !== "string" || name.trim() === "") return Result.fail(new ValidationFailed({ detail: "name is required" }))
  if ([...name].length > 100) return Result.fail(new ValidationFailed({ detail: "name must be at most 100 characters" }))
  const found = banned.exec(name)
  if (found) return Result.fail(new ValidationFailed({ detail: `name contains a banned character (${JSON.stringify(found[0])})` }))
  return Result.succeed(name.trim())
}
