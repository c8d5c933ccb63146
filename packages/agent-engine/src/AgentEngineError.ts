/**
 * The failures callers of the AgentEngine port may handle. Adapters translate process, filesystem and CLI failures
 * into these, so nothing engine-specific leaks past an adapter. The HTTP layer owns the documented strings and
 * statuses; the messages here are for logs.
 */
import { Schema } from "effect"

/** The requested engine version is not one `listVersions` offers. */
export class InvalidVersion extends Schema.TaggedError<InvalidVersion>()("InvalidVersion", {
  version: Schema.String
}) {
  override get message() {
    return `Engine version ${this.version} is not installable`
  }
}

/** The engine migrates its state one way, so an agent never moves to an older version than it runs. */
export class DowngradeRefused extends Schema.TaggedError<DowngradeRefused>()("DowngradeRefused", {
  from: Schema.String,
  to: Schema.String
}) {
  override get message() {
    return `Refusing to downgrade from ${this.from} to ${this.to}`
  }
}

/** The gateway exited or never became ready; `logTail` holds its last output, which usually says why. */
export class GatewayFailedToStart extends Schema.TaggedError<GatewayFailedToStart>()("GatewayFailedToStart", {
  agentId: Schema.String,
  logTail: Schema.String
}) {
  override get message() {
    return `Gateway of agent ${this.agentId} failed to start`
  }
}

/** A restart stopped the gateway but could not bring it back; `cause` is usually a GatewayFailedToStart. */
export class RestartFailed extends Schema.TaggedError<RestartFailed>()("RestartFailed", {
  agentId: Schema.String,
  cause: Schema.optionalKey(Schema.Defect())
}) {
  override get message() {
    return `Restart of agent ${this.agentId} failed`
  }
}

/** An engine command failed, or needed a running gateway that was not there. */
export class EngineCliError extends Schema.TaggedError<EngineCliError>()("EngineCliError", {
  agentId: Schema.String,
  detail: Schema.String
}) {
  override get message() {
    return `Engine command for agent ${this.agentId} failed: ${this.detail}`
  }
}

/** The agent's build or start scripts could not be launched. */
export class ScriptLaunchFailed extends Schema.TaggedError<ScriptLaunchFailed>()("ScriptLaunchFailed", {
  agentId: Schema.String,
  detail: Schema.String
}) {
  override get message() {
    return `Scripts of agent ${this.agentId} failed to launch: ${this.detail}`
  }
}

/** The engine has no such agent: it was never provisioned, or it was destroyed. */
export class AgentNotProvisioned extends Schema.TaggedError<AgentNotProvisioned>()("AgentNotProvisioned", {
  agentId: Schema.String
}) {
  override get message() {
    return `Agent ${this.agentId} is not provisioned`
  }
}

/** The engine itself could not be reached or used (the version registry, the data directory). */
export class EngineUnavailable extends Schema.TaggedError<EngineUnavailable>()("EngineUnavailable", {
  cause: Schema.Defect()
}) {
  override get message() {
    return "Agent engine unavailable"
  }
}
