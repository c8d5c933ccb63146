/**
 * The AgentEngine port: the boundary between Cairn's agents control plane and whatever runs the agents' gateways.
 * The control plane names agents by id and gets plain values or the typed errors of AgentEngineError.ts back; the
 * adapter owns processes, files and the engine's own protocols. Adapters: SimulatedAgentEngine (here) and
 * OpenClawAgentEngine (@cairn/agent-engine-openclaw).
 */
import { Context, type Effect, type Redacted, Schema } from "effect"
import type {
  AgentNotProvisioned,
  DowngradeRefused,
  EngineCliError,
  EngineUnavailable,
  GatewayDidNotStart,
  VersionNotOffered,
  GatewayRestartFailed,
  ScriptsFailedToLaunch
} from "./AgentEngineError.ts"

/** A device that asked to pair with an agent's gateway, or was allowed to. */
export const Device = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  /** When the device asked to pair (ISO 8601), if the engine reports it. */
  requestedAt: Schema.optionalKey(Schema.String)
})
export type Device = typeof Device.Type

export interface Devices {
  readonly pending: ReadonlyArray<Device>
  readonly paired: ReadonlyArray<Device>
}

/**
 * Where an agent's gateway is: `starting` until it answers as ready, `crashed` when its process died without being
 * asked to stop (including a start that failed).
 */
export const AgentState = Schema.Literals(["stopped", "starting", "running", "crashed"])
export type AgentState = typeof AgentState.Type

export interface AgentStatus {
  readonly state: AgentState
  /** The engine version the agent runs, or will run at its next start. */
  readonly version: string
}

export interface ProvisionSpec {
  readonly version: string
  /** The token clients must present to the gateway. */
  readonly gatewayToken: Redacted.Redacted<string>
}

export interface RestartOptions {
  /** Move to this version; it must be installable and not older than the current one. */
  readonly version?: string
}

export class AgentEngine extends Context.Service<AgentEngine, {
  /** The installable engine versions, oldest first; never empty (no version to offer is EngineUnavailable). */
  readonly listVersions: Effect.Effect<ReadonlyArray<string>, EngineUnavailable>
  /**
   * Prepares the agent's home and configuration, stopped. Idempotent: an agent that exists is left as it is (its
   * version changes through `restart`, its token through `rotateGatewayToken`).
   */
  readonly provision: (agentId: string, spec: ProvisionSpec) => Effect.Effect<void, VersionNotOffered | EngineUnavailable>
  /** Starts the gateway and resolves once it is ready; does nothing to a running one. */
  readonly start: (agentId: string) => Effect.Effect<void, GatewayDidNotStart | AgentNotProvisioned>
  /** Stops the gateway; does nothing to a stopped one. A start still in progress fails. */
  readonly stop: (agentId: string) => Effect.Effect<void, AgentNotProvisioned>
  /**
   * Stops the gateway and starts it again, on `options.version` when given. A failed start comes back as
   * GatewayRestartFailed; the agent then stays on the new version.
   */
  readonly restart: (
    agentId: string,
    options?: RestartOptions
  ) => Effect.Effect<void, VersionNotOffered | DowngradeRefused | GatewayRestartFailed | AgentNotProvisioned>
  readonly status: (agentId: string) => Effect.Effect<AgentStatus, AgentNotProvisioned>
  /** The devices waiting to pair and those paired; asks the gateway, so it must be running. */
  readonly listDevices: (agentId: string) => Effect.Effect<Devices, EngineCliError | AgentNotProvisioned>
  /** Runs the agent's build and start scripts again. */
  readonly relaunchScripts: (agentId: string) => Effect.Effect<void, ScriptsFailedToLaunch | AgentNotProvisioned>
  /** Replaces the gateway token: from now on the gateway accepts only `token`. */
  readonly rotateGatewayToken: (
    agentId: string,
    token: Redacted.Redacted<string>
  ) => Effect.Effect<void, AgentNotProvisioned>
  /**
   * Sets the variables the agent's gateway gets from its next start on (its secrets), replacing any set before. A
   * running gateway keeps the environment it started with until it is restarted. The engine's own variables
   * (HOME, PATH, OPENCLAW_*, …) always win over these. Values are held in memory only, never written to disk.
   * A variable no gateway could be given safely (see EngineEnvironment.ts) is left out, and a warning names it.
   */
  readonly setEnvironment: (
    agentId: string,
    environment: Readonly<Record<string, Redacted.Redacted<string>>>
  ) => Effect.Effect<void, AgentNotProvisioned>
  /** Stops the agent and removes everything the engine holds for it. Idempotent. */
  readonly destroy: (agentId: string) => Effect.Effect<void>
}>()("cairn/AgentEngine") {}
