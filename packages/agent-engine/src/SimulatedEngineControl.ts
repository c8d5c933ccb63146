/**
 * The back door into SimulatedAgentEngine, for tests and scripted scenarios: it scripts the failures a real engine
 * shows (a gateway that will not start, a CLI that errors, a crash) and reveals what a real engine keeps to itself
 * (how often a gateway was launched, which token it accepts, the environment it got), and acts as the agent would
 * inside its own workspace (editing a skill's file). `SimulatedAgentEngine.layer` provides it next to the AgentEngine
 * it controls.
 */
import type { Channel } from "@cairn/domain"
import { Context, type Effect, type Redacted } from "effect"
import type { Device } from "./AgentEngine.ts"
import type { AgentNotProvisioned } from "./AgentEngineError.ts"
import type { ExecRequest } from "./WorkspaceOperations.ts"

/** The config operations whose failure can be scripted: reading, writing, and running the validator. */
export type ConfigOperation = "read" | "write" | "validate"

export class SimulatedEngineControl extends Context.Service<SimulatedEngineControl, {
  /** The version scenarios provision with when they do not care which. */
  readonly defaultVersion: string
  /**
   * Makes the next start of `agentId` (or, with `"*"`, of whichever agent starts next) fail with GatewayDidNotStart
   * carrying `logTail`. Calls queue up: two calls fail two starts.
   */
  readonly failNextStart: (agentId: string, logTail: string) => Effect.Effect<void>
  /** Makes every engine command for `agentId` (listing devices or skills) fail with `detail` until `clearFailures`. */
  readonly failCli: (agentId: string, detail: string) => Effect.Effect<void>
  /** Makes every script relaunch for `agentId` fail with `detail` until `clearFailures`. */
  readonly failScripts: (agentId: string, detail: string) => Effect.Effect<void>
  /**
   * Makes every console command of `agentId` fail to start (ExecFailed with `detail`) until `clearFailures`. A working
   * directory outside the workspace is still refused first.
   */
  readonly failExec: (agentId: string, detail: string) => Effect.Effect<void>
  /** The console commands the agent ran (started, whatever their exit code), oldest first, as requested. */
  readonly execLog: (agentId: string) => Effect.Effect<ReadonlyArray<ExecRequest>, AgentNotProvisioned>
  /**
   * Makes one config operation of `agentId` fail with `detail` until `clearFailures`: `read` (readConfig and
   * writeConfig: ConfigUnreadable), `write` (writeConfig, once the config passed every check: ConfigUnwritable),
   * `validate` (validateConfig: ValidatorFailed).
   */
  readonly failConfig: (agentId: string, operation: ConfigOperation, detail: string) => Effect.Effect<void>
  /** The agent's config as stored, credentials unredacted (what a real engine keeps in its file). */
  readonly storedConfig: (agentId: string) => Effect.Effect<Readonly<Record<string, unknown>>, AgentNotProvisioned>
  /** Makes every scheduled-task operation of `agentId` fail with TasksFailed carrying `detail` until `clearFailures`. */
  readonly failTasks: (agentId: string, detail: string) => Effect.Effect<void>
  /** Makes `setChannels` and `channelStatus` of `agentId` fail with ChannelsUnavailable until `clearFailures`. */
  readonly failChannels: (agentId: string, detail: string) => Effect.Effect<void>
  /** Makes the agent's next chat turn fail with ChatFailed carrying `detail` (its message is still recorded). */
  readonly failNextChat: (agentId: string, detail: string) => Effect.Effect<void>
  /** Makes the agent's next chat turn never answer: it ends with ChatTimedOut once its timeout passes on the Clock. */
  readonly hangNextChat: (agentId: string) => Effect.Effect<void>
  /** Drops every failure scripted for `agentId`: queued start failures, CLI, script, exec, config, task and chat failures. */
  readonly clearFailures: (agentId: string) => Effect.Effect<void>
  /**
   * Makes the engine itself unavailable until `restoreEngine`: `listVersions`, `provision`, and the operations on
   * workspaces and skills (as a data directory that cannot be written makes them fail).
   */
  readonly failEngine: (cause: unknown) => Effect.Effect<void>
  readonly restoreEngine: Effect.Effect<void>
  /**
   * Makes the install of `version` hang until `finishInstall`: a provision of that version waits meanwhile (reporting
   * `installing_engine` with the bytes of the last `reportInstall`, 0 at first), as the first agent of a version not
   * yet on disk waits for a real engine's install. Versions not held install at once.
   */
  readonly holdInstall: (version: string) => Effect.Effect<void>
  /** Offers another version from now on, as a new engine release does (agents already made stay on theirs). */
  readonly offerVersion: (version: string) => Effect.Effect<void>
  /** How much of a held install is on disk so far, as `provisioning` reports it. */
  readonly reportInstall: (version: string, installedBytes: number) => Effect.Effect<void>
  /** Ends a held install: the provisions waiting for it go on. */
  readonly finishInstall: (version: string) => Effect.Effect<void>
  /**
   * Keeps every gateway launched from now on `starting` (reporting `starting_gateway`) until `releaseStarts`, past
   * its start delay.
   */
  readonly holdStarts: Effect.Effect<void>
  readonly releaseStarts: Effect.Effect<void>
  /**
   * Kills a starting or running gateway as if its process died: the agent is `crashed`; with `oom`, as the kernel's
   * OOM killer does at the agent's memory cap (its status then says so).
   */
  readonly crash: (agentId: string, reason?: "oom") => Effect.Effect<void, AgentNotProvisioned>
  /** Adds a device to a list, or moves it there when its id is already known (pairing approves a request). */
  readonly addDevice: (
    agentId: string,
    device: Device,
    list: "pending" | "paired"
  ) => Effect.Effect<void, AgentNotProvisioned>
  /**
   * A sender writes to the agent's bot on `channel`, which answers with a pairing code (the same code while their
   * request is pending): the code, deterministic (the n-th request of the engine gets the n-th code).
   */
  readonly requestChannelPairing: (
    agentId: string,
    channel: Channel.ChannelName,
    senderId: string
  ) => Effect.Effect<string, AgentNotProvisioned>
  /** The senders approved on the channel (its allow store), in the order they were approved. */
  readonly approvedChannelSenders: (
    agentId: string,
    channel: Channel.ChannelName
  ) => Effect.Effect<ReadonlyArray<string>, AgentNotProvisioned>
  /**
   * A phone scans the QR code of the agent's WhatsApp login under way: the channel is linked (as OpenClaw keeps the
   * link in the agent's home, until a forced login drops it). False when no login waits.
   */
  readonly scanWhatsAppQr: (agentId: string) => Effect.Effect<boolean, AgentNotProvisioned>
  /**
   * Fails the agent's WhatsApp login under way with `reason` (what the next look at the link tells), or, with none
   * under way, the next one (WhatsApp could not be reached).
   */
  readonly failWhatsAppLogin: (agentId: string, reason: string) => Effect.Effect<void, AgentNotProvisioned>
  /** How many times the agent's gateway was launched, failed launches included. */
  readonly startCount: (agentId: string) => Effect.Effect<number, AgentNotProvisioned>
  /** Appends a line to the gateway's log, as the gateway (or the agent, whose home holds it) would write it. */
  readonly writeGatewayLog: (agentId: string, line: string) => Effect.Effect<void, AgentNotProvisioned>
  /** How many times the agent's scripts were relaunched successfully. */
  readonly scriptLaunches: (agentId: string) => Effect.Effect<number, AgentNotProvisioned>
  /** The only token the agent's gateway accepts now. */
  readonly currentToken: (agentId: string) => Effect.Effect<Redacted.Redacted<string>, AgentNotProvisioned>
  /**
   * The plain environment the agent's current (or last) gateway launch received: the variables set before it, under
   * the engine's own. Undefined for a gateway never launched, and for an agent unknown or destroyed.
   */
  readonly environmentOf: (agentId: string) => Effect.Effect<Readonly<Record<string, string>> | undefined>
  /**
   * Changes a file of the agent's workspace as the agent itself could (a skill editing its own files, a user in the
   * agent's console): writes `content`, or deletes the file when it is undefined. Skills' files are at
   * `skills/<name>/<path>`. The path must be relative and `..`-free.
   */
  readonly editWorkspaceFile: (
    agentId: string,
    path: string,
    content: Uint8Array | undefined
  ) => Effect.Effect<void, AgentNotProvisioned>
}>()("cairn/SimulatedEngineControl") {}
