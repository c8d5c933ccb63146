/**
 * The failures callers of the AgentEngine port may handle. Adapters translate process, filesystem and CLI failures
 * into these, so nothing engine-specific leaks past an adapter. None of them is shown to clients: the application
 * maps them onto the documented errors of the domain (`Agent.InvalidVersion`, `Agent.RestartFailed`, …), whose names
 * these deliberately do not reuse; the messages here are for logs.
 */
import { Schema } from "effect"

/** The requested engine version is not one `listVersions` offers. */
export class VersionNotOffered extends Schema.TaggedError<VersionNotOffered>()("VersionNotOffered", {
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
export class GatewayDidNotStart extends Schema.TaggedError<GatewayDidNotStart>()("GatewayDidNotStart", {
  agentId: Schema.String,
  logTail: Schema.String
}) {
  override get message() {
    return `Gateway of agent ${this.agentId} failed to start`
  }
}

/** A restart stopped the gateway but could not bring it back; `cause` is usually a GatewayDidNotStart. */
export class GatewayRestartFailed extends Schema.TaggedError<GatewayRestartFailed>()("GatewayRestartFailed", {
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
export class ScriptsFailedToLaunch extends Schema.TaggedError<ScriptsFailedToLaunch>()("ScriptsFailedToLaunch", {
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
  /** Clients get 503 Service unavailable; the cause goes to the log (see @cairn/domain DocumentedError). */
  readonly unavailable = true
  override get message() {
    return "Agent engine unavailable"
  }
}
