/**
 * The documented failures of the agents API (service interface, section 7), each with its status and its exact
 * string. The application maps engine failures onto these; the HTTP layer renders any of them as `{error}`.
 */
import { Schema } from "effect"

export class InvalidVersion extends Schema.TaggedError<InvalidVersion>()("InvalidVersion", { version: Schema.String }) {
  readonly status = 400
  override get message() {
    return "Invalid version"
  }
}

export class RestartFailed extends Schema.TaggedError<RestartFailed>()("RestartFailed", { agentId: Schema.String }) {
  readonly status = 500
  override get message() {
    return "Restart failed"
  }
}

export class ScriptLaunchFailed extends Schema.TaggedError<ScriptLaunchFailed>()("ScriptLaunchFailed", { agentId: Schema.String }) {
  readonly status = 500
  override get message() {
    return "Script launch failed"
  }
}

export class CliError extends Schema.TaggedError<CliError>()("CliError", { agentId: Schema.String }) {
  readonly status = 500
  override get message() {
    return "CLI error"
  }
}

export class TokenGenerationFailed extends Schema.TaggedError<TokenGenerationFailed>()("TokenGenerationFailed", { agentId: Schema.String }) {
  readonly status = 500
  override get message() {
    return "Token generation failed"
  }
}

/** Creation succeeded but the gateway did not come up: the response carries the agent, which can be restarted. */
export class GatewayFailedToStart extends Schema.TaggedError<GatewayFailedToStart>()("GatewayFailedToStart", {
  agentId: Schema.String
}) {
  readonly status = 500
  override get message() {
    return "Gateway failed to start"
  }
}

/** The issues endpoints exist only for internal accounts; everyone else is told there is nothing here. */
export class IssuesNotAvailable extends Schema.TaggedError<IssuesNotAvailable>()("IssuesNotAvailable", {}) {
  readonly status = 404
  override get message() {
    return "Not found"
  }
}
