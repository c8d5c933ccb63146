/**
 * How the runtime-config endpoints refuse (service interface, section 7: `Invalid JSON` or invalid config, `Failed to
 * read config`, `Failed to write config`, `Validation command failed`). The application maps the engine's failures
 * onto these.
 */
import { Schema } from "effect"

/** The body, or its `config`, is not JSON, or not a JSON object (nor a string holding one). */
export class InvalidJson extends Schema.TaggedError<InvalidJson>()("InvalidJson", { detail: Schema.String }) {
  readonly status = 400
  override readonly message = "Invalid JSON"
}

/** The engine's validator refused the config: its issues go in the body beside `error`. Nothing was written. */
export class InvalidConfig extends Schema.TaggedError<InvalidConfig>()("InvalidConfig", {
  issues: Schema.Array(Schema.Struct({ path: Schema.String, message: Schema.String }))
}) {
  readonly status = 400
  override readonly message = "Invalid config"
  get details() {
    return { issues: this.issues }
  }
}

/** The write named a `baseHash` that is no longer the engine's current version. Nothing was written. */
export class ConfigChangedSinceRead extends Schema.TaggedError<ConfigChangedSinceRead>()("ConfigChangedSinceRead", {
  agentId: Schema.String
}) {
  readonly status = 409
  override readonly message = "Config changed since it was read"
}

/** The write changed settings Cairn manages (the gateway's token, port, bind address). Nothing was written. */
export class SettingsManagedByCairn extends Schema.TaggedError<SettingsManagedByCairn>()("SettingsManagedByCairn", {
  paths: Schema.Array(Schema.String)
}) {
  readonly status = 400
  override get message() {
    return `Settings managed by Cairn cannot be changed: ${this.paths.join(", ")}`
  }
  get details() {
    return { paths: this.paths }
  }
}

export class FailedToReadConfig extends Schema.TaggedError<FailedToReadConfig>()("FailedToReadConfig", { agentId: Schema.String }) {
  readonly status = 500
  override readonly message = "Failed to read config"
}

export class FailedToWriteConfig extends Schema.TaggedError<FailedToWriteConfig>()("FailedToWriteConfig", { agentId: Schema.String }) {
  readonly status = 500
  override readonly message = "Failed to write config"
}

/** The engine's validator could not run (as opposed to running and finding the config invalid). */
export class ValidationCommandFailed extends Schema.TaggedError<ValidationCommandFailed>()("ValidationCommandFailed", {
  agentId: Schema.String
}) {
  readonly status = 500
  override readonly message = "Validation command failed"
}

/** Nothing refuses a write the engine applied; the union is here for the decider's shape. */
export type RuntimeConfigError = never
