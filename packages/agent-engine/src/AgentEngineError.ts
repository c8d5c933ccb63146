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

/** The gateway knows no pairing request or paired device by this id. */
export class UnknownDevice extends Schema.TaggedError<UnknownDevice>()("UnknownDevice", {
  agentId: Schema.String,
  id: Schema.String
}) {
  override get message() {
    return `The gateway of agent ${this.agentId} knows no device or pairing request ${JSON.stringify(this.id)}`
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

/** A console command's working directory resolves outside the agent's workspace (or is not a directory). */
export class WorkingDirectoryOutside extends Schema.TaggedError<WorkingDirectoryOutside>()("WorkingDirectoryOutside", {
  agentId: Schema.String,
  cwd: Schema.String
}) {
  override get message() {
    return `Working directory ${JSON.stringify(this.cwd)} is outside the workspace of agent ${this.agentId}`
  }
}

/** A console command could not be started (the sandbox or the shell could not be spawned). */
export class ExecFailed extends Schema.TaggedError<ExecFailed>()("ExecFailed", {
  agentId: Schema.String,
  detail: Schema.String
}) {
  override get message() {
    return `Command for agent ${this.agentId} could not run: ${this.detail}`
  }
}

/** The agent's runtime config could not be read (missing, unparseable, or the gateway did not answer). */
export class ConfigUnreadable extends Schema.TaggedError<ConfigUnreadable>()("ConfigUnreadable", {
  agentId: Schema.String,
  detail: Schema.String
}) {
  override get message() {
    return `Config of agent ${this.agentId} could not be read: ${this.detail}`
  }
}

/** The engine's validator refused a config; nothing was written. */
export class ConfigRejected extends Schema.TaggedError<ConfigRejected>()("ConfigRejected", {
  agentId: Schema.String,
  issues: Schema.Array(Schema.Struct({ path: Schema.String, message: Schema.String }))
}) {
  override get message() {
    return `Config of agent ${this.agentId} is invalid: ${this.issues.map((issue) => `${issue.path}: ${issue.message}`).join("; ")}`
  }
}

/** A config write named a base hash that is no longer the current version; nothing was written. */
export class ConfigChanged extends Schema.TaggedError<ConfigChanged>()("ConfigChanged", {
  agentId: Schema.String
}) {
  override get message() {
    return `Config of agent ${this.agentId} changed since it was read`
  }
}

/** A config write tried to change settings Cairn owns (the gateway's token, port, bind address); nothing was written. */
export class ConfigSettingOwned extends Schema.TaggedError<ConfigSettingOwned>()("ConfigSettingOwned", {
  agentId: Schema.String,
  paths: Schema.Array(Schema.String)
}) {
  override get message() {
    return `Settings managed by Cairn cannot be changed: ${this.paths.join(", ")}`
  }
}

/** A valid config could not be written (the file, or the gateway's write RPC, failed). */
export class ConfigUnwritable extends Schema.TaggedError<ConfigUnwritable>()("ConfigUnwritable", {
  agentId: Schema.String,
  detail: Schema.String
}) {
  override get message() {
    return `Config of agent ${this.agentId} could not be written: ${this.detail}`
  }
}

/** The engine's config validator could not run (as opposed to running and finding the config invalid). */
export class ValidatorFailed extends Schema.TaggedError<ValidatorFailed>()("ValidatorFailed", {
  agentId: Schema.String,
  detail: Schema.String
}) {
  override get message() {
    return `Config validator for agent ${this.agentId} could not run: ${this.detail}`
  }
}

/** The engine's scheduler refused a task operation, or could not be reached (its gateway is not running). */
export class TasksFailed extends Schema.TaggedError<TasksFailed>()("TasksFailed", {
  agentId: Schema.String,
  detail: Schema.String
}) {
  override get message() {
    return `Scheduled tasks of agent ${this.agentId}: ${this.detail}`
  }
}

/** The engine has no task with this id for the agent. */
export class TaskNotFound extends Schema.TaggedError<TaskNotFound>()("TaskNotFound", {
  agentId: Schema.String,
  taskId: Schema.String
}) {
  override get message() {
    return `Agent ${this.agentId} has no task ${this.taskId}`
  }
}

/** The task is one of the engine's own jobs, which users may run and toggle but not change or delete. */
export class SystemTaskProtected extends Schema.TaggedError<SystemTaskProtected>()("SystemTaskProtected", {
  agentId: Schema.String,
  taskId: Schema.String
}) {
  override get message() {
    return `Task ${this.taskId} of agent ${this.agentId} belongs to the engine and cannot be changed or deleted`
  }
}

/** An agent's app cannot be reached: it runs in the agent's own network, and the agent's gateway (with it) is down. */
export class AppNotRunning extends Schema.TaggedError<AppNotRunning>()("AppNotRunning", {
  agentId: Schema.String,
  port: Schema.Number
}) {
  override get message() {
    return `Agent ${this.agentId} is not running: nothing of it listens on port ${this.port}`
  }
}

/** An agent's app cannot be given a port the engine itself uses (a gateway's own ports). */
export class AppPortReserved extends Schema.TaggedError<AppPortReserved>()("AppPortReserved", {
  agentId: Schema.String,
  port: Schema.Number
}) {
  override get message() {
    return `Port ${this.port} is the engine's own; the app of agent ${this.agentId} cannot be reached there`
  }
}
