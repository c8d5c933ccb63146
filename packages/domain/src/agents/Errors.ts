/**
 * Why an agent command was refused, or how an engine-backed operation failed: one class per documented failure
 * (service interface, section 7), each with its status and its exact string. The application maps engine failures
 * onto these; the HTTP layer renders any of them as `{error}`.
 */
import { Schema } from "effect"
import type { ValidationFailed } from "../ValidationFailed.ts"
import type { ConflictingSecrets } from "../secrets/Errors.ts"

/** A wrong `agentId`, another workspace's agent, or a deleted one. */
export class AgentNotFound extends Schema.TaggedError<AgentNotFound>()("AgentNotFound", { agentId: Schema.String }) {
  readonly status = 404
  override readonly message = "Agent not found"
}

/** Agent ids are random; a second create under the same id is refused rather than merged. */
export class AgentAlreadyExists extends Schema.TaggedError<AgentAlreadyExists>()("AgentAlreadyExists", { agentId: Schema.String }) {
  readonly status = 409
  override readonly message = "Agent already exists"
}

/** A restart asked for an engine version that is not offered, or older than the one the agent runs. */
export class InvalidVersion extends Schema.TaggedError<InvalidVersion>()("InvalidVersion", { version: Schema.String }) {
  readonly status = 400
  override readonly message = "Invalid version"
}

export class RestartFailed extends Schema.TaggedError<RestartFailed>()("RestartFailed", {
  agentId: Schema.String,
  /** Why, when Cairn knows it before the engine is asked (a secret that does not decrypt); shown as `reason`. */
  reason: Schema.optionalKey(Schema.String)
}) {
  readonly status = 500
  override readonly message = "Restart failed"
  get details() {
    return this.reason === undefined ? undefined : { reason: this.reason }
  }
}

export class ScriptLaunchFailed extends Schema.TaggedError<ScriptLaunchFailed>()("ScriptLaunchFailed", { agentId: Schema.String }) {
  readonly status = 500
  override readonly message = "Script launch failed"
}

/**
 * The agent's gateway is starting (created, restarted, brought back after a crash) and did not come up within the
 * wait a request allows it: a passing state, never a failure, so 503 with when to try again.
 */
export class GatewayStarting extends Schema.TaggedError<GatewayStarting>()("GatewayStarting", { agentId: Schema.String }) {
  readonly status = 503
  override readonly message = "Agent is starting, try again shortly"
  readonly retryAfterSeconds = 5
}

export class CliError extends Schema.TaggedError<CliError>()("CliError", { agentId: Schema.String }) {
  readonly status = 500
  override readonly message = "CLI error"
}

/** A pairing request or paired device the agent's gateway does not know (approved, rejected or removed already). */
export class DeviceNotFound extends Schema.TaggedError<DeviceNotFound>()("DeviceNotFound", { agentId: Schema.String, id: Schema.String }) {
  readonly status = 404
  override readonly message = "Device not found"
}

export class TokenGenerationFailed extends Schema.TaggedError<TokenGenerationFailed>()("TokenGenerationFailed", { agentId: Schema.String }) {
  readonly status = 500
  override readonly message = "Token generation failed"
}

/** Creation succeeded but the gateway did not come up: the response carries the agent (as the API shows it), which can be restarted. */
export class GatewayFailedToStart extends Schema.TaggedError<GatewayFailedToStart>()("GatewayFailedToStart", {
  agentId: Schema.String,
  agent: Schema.Unknown
}) {
  readonly status = 500
  override readonly message = "Gateway failed to start"
  get details() {
    return { agent: this.agent }
  }
}

/** The skill is in the library but not attached to this agent. */
export class SkillNotAttached extends Schema.TaggedError<SkillNotAttached>()("SkillNotAttached", { skillId: Schema.String }) {
  readonly status = 404
  override readonly message = "Skill not attached to this agent"
}

export type AgentError = AgentNotFound | AgentAlreadyExists | InvalidVersion | ConflictingSecrets | ValidationFailed | SkillNotAttached
