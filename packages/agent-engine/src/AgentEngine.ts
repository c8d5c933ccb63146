/**
 * The AgentEngine port: the boundary between Cairn's agents control plane and whatever runs the agents' gateways.
 * The control plane names agents by id and gets plain values or the typed errors of AgentEngineError.ts back; the
 * adapter owns processes, files and the engine's own protocols. Adapters: SimulatedAgentEngine (here) and
 * OpenClawAgentEngine (@cairn/agent-engine-openclaw).
 */
import type { Channel } from "@cairn/domain"
import { Context, type Effect, type Redacted, Schema, type Stream } from "effect"
import type {
  AgentNotProvisioned,
  AppNotRunning,
  AppPortReserved,
  DowngradeRefused,
  EngineCliError,
  EngineUnavailable,
  GatewayDidNotStart,
  VersionNotOffered,
  GatewayRestartFailed,
  ScriptsFailedToLaunch,
  WorkingDirectoryOutside,
  ExecFailed,
  ConfigUnreadable,
  ConfigRejected,
  ConfigChanged,
  ConfigSettingOwned,
  ConfigUnwritable,
  ValidatorFailed,
  TasksFailed,
  TaskNotFound,
  SystemTaskProtected,
  UnknownDevice
} from "./AgentEngineError.ts"
import type {
  ConfigValidation,
  ConfigWrite,
  EngineConfig,
  ExecRequest,
  ExecResult,
  Task,
  TaskPatch,
  TaskRun,
  TaskSpec,
  WorkspaceRead
} from "./WorkspaceOperations.ts"
import type { RestoreEntry, RestoreOptions, ScanOptions, WorkspaceEntry } from "./WorkspaceTree.ts"
import type { ChannelPairingRequest, ChannelSpec, ChannelStatus, ChannelsUnavailable, UnknownPairingCode, WhatsAppLink } from "./Channels.ts"
import type { LogChunk, LogRequest } from "./GatewayLogs.ts"
import type {
  ChatEvent,
  ChatFailed,
  ChatMessage,
  ChatRequest,
  ChatSession,
  ChatSessionNotFound,
  ChatTimedOut,
  ChatUnavailable,
  EngineModels
} from "./Chat.ts"

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
  /**
   * Why a `crashed` gateway died, where the engine knows: `oom`, the kernel's OOM killer ended it at the agent's
   * memory cap (AGENT_MEMORY_MAX).
   */
  readonly reason?: "oom"
}

/**
 * What the engine is doing to bring an agent up: installing the agent's engine version (the first agent of a version
 * waits for it: hundreds of MB from a registry), then starting its gateway. Transient: it is runtime state of the
 * node running the agent, never recorded.
 */
export const ProvisioningPhase = Schema.Literals(["installing_engine", "starting_gateway"])
export type ProvisioningPhase = typeof ProvisioningPhase.Type

export interface Provisioning {
  readonly phase: ProvisioningPhase
  /** The engine version being installed or started. */
  readonly version: string
  /** How long the agent has been on its way up (since its provisioning, or since this start of its gateway). */
  readonly elapsedMs: number
  /** While installing: how much of the engine version is on disk so far, when the engine can tell. */
  readonly installedBytes?: number
}

export interface ProvisionSpec {
  readonly version: string
  /** The token clients must present to the gateway. */
  readonly gatewayToken: Redacted.Redacted<string>
}

/** A file in an agent's workspace, at a `/`-separated path relative to the folder it belongs to. */
export interface WorkspaceFile {
  readonly path: string
  readonly content: Uint8Array
}

/** A skill folder to install: `<workspace>/skills/<name>/` gets exactly `files` (SKILL.md among them). */
export interface SkillFolder {
  readonly name: string
  readonly files: ReadonlyArray<WorkspaceFile>
}

/** A skill as the engine itself reports it (OpenClaw's `skills list`): where it was found, and whether it can run. */
export interface EngineSkill {
  /**
   * The name the engine loads the skill under: OpenClaw takes it from SKILL.md's front matter (`name:`), and the
   * folder's name only when there is none, so it need not be the `SkillFolder.name` it was installed as.
   */
  readonly name: string
  /** The engine's word for where the skill came from; `workspace` for the agent's own `<workspace>/skills`. */
  readonly source: string
  readonly eligible: boolean
}

export interface RestartOptions {
  /** Move to this version; it must be installable and not older than the current one. */
  readonly version?: string
}

/**
 * What all of one agent's processes may use together on this node (decision 0042): memory in bytes, CPU in cores,
 * processes, and what it may store (decision 0044). A null limit is not enforced here (no cgroup controller for it,
 * no filesystem of its own).
 */
export interface AgentLimits {
  readonly memoryBytes: number | null
  readonly cpus: number | null
  readonly pids: number | null
  /** What the agent may store in its home, in bytes (its own filesystem: decision 0044). */
  readonly diskBytes: number | null
}

/**
 * Where something listening inside an agent's workspace is reached from this node: a TCP address, or (an agent with a
 * network of its own) a way to open connections into it. The same object is given for the same port as long as the
 * agent's network lasts, so a caller can keep connections made through it (keyed by the object itself).
 */
export type AppEndpoint =
  | { readonly host: string; readonly port: number }
  | { readonly connect: () => Promise<NodeJS.ReadWriteStream> }

/**
 * An `http.request` `createConnection` (its callback form) that opens the connection with `connect`: how an
 * endpoint's `connect` (AppEndpoint, an agent's own network) is used by an HTTP client.
 */
export const connectionThrough = <S>(connect: () => Promise<S>) =>
  (_options: unknown, done: (error: Error | null, socket: S) => void): undefined => {
    connect().then((socket) => done(null, socket), (error: Error) => done(error, undefined as never))
    return undefined
  }

export class AgentEngine extends Context.Service<AgentEngine, {
  /** Which engine runs this node's agents, as agents report it: `openclaw`, or `simulated` for tests and demos. */
  readonly name: "openclaw" | "simulated"
  /** Each agent's limits on this node; absent where nothing caps an agent's processes together (SANDBOX=off). */
  readonly agentLimits?: AgentLimits
  /** The memory the agent's processes use now, in bytes; undefined where it is not counted. */
  readonly memoryUsage?: (agentId: string) => Effect.Effect<number | undefined>
  /** The bytes the agent stores in its home now; undefined where its disk is not capped (so not counted). */
  readonly diskUsage?: (agentId: string) => Effect.Effect<number | undefined>
  /** The installable engine versions, oldest first; never empty (no version to offer is EngineUnavailable). */
  readonly listVersions: Effect.Effect<ReadonlyArray<string>, EngineUnavailable>
  /** Whether `version` is installed on this node already: a start of it then needs no install first. */
  readonly isInstalled: (version: string) => Effect.Effect<boolean>
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
  /**
   * What the engine is doing to bring the agent up while `provision` runs or its gateway is `starting`; undefined
   * otherwise (running, stopped, crashed, or an agent the engine does not know).
   */
  readonly provisioning: (agentId: string) => Effect.Effect<Provisioning | undefined>
  /** The devices waiting to pair and those paired; asks the gateway, so it must be running. */
  readonly listDevices: (agentId: string) => Effect.Effect<Devices, EngineCliError | AgentNotProvisioned>
  /**
   * Answers a device's request to pair with the gateway: `approve` pairs it (it may then connect with its own token),
   * `reject` drops the request. Asks the gateway, so it must be running.
   */
  readonly answerPairing: (
    agentId: string,
    requestId: string,
    answer: "approve" | "reject"
  ) => Effect.Effect<void, EngineCliError | UnknownDevice | AgentNotProvisioned>
  /** Unpairs a paired device: its token stops working. Asks the gateway, so it must be running. */
  readonly removeDevice: (agentId: string, deviceId: string) => Effect.Effect<void, EngineCliError | UnknownDevice | AgentNotProvisioned>
  /**
   * The gateway's log (GatewayLogs.ts): its last lines, or what it wrote after a cursor; read from the log itself, so
   * a stopped or crashed gateway's last words are there too. Secret values the engine knows never appear in it.
   */
  readonly readLogs: (agentId: string, request: LogRequest) => Effect.Effect<LogChunk, EngineUnavailable | AgentNotProvisioned>
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
  /**
   * Installs a skill into the agent's workspace where the engine discovers it (`<workspace>/skills/<name>/`),
   * replacing any folder of that name whole: the new copy is written beside the old one and swapped in, so the
   * agent sees either the old folder or the new one, never a mix (on disk, for an instant between two renames, no
   * folder). Paths are relative and `..`-free (callers check; WorkspacePath has the rules, and a path breaking them
   * is a defect).
   */
  readonly installSkill: (agentId: string, skill: SkillFolder) => Effect.Effect<void, EngineUnavailable | AgentNotProvisioned>
  /** Removes the skill's folder; a folder that is not there is fine. */
  readonly removeSkill: (agentId: string, name: string) => Effect.Effect<void, EngineUnavailable | AgentNotProvisioned>
  /** The skill folder's files as they are now (edits made inside the agent included); `undefined` when absent. */
  readonly readSkill: (
    agentId: string,
    name: string
  ) => Effect.Effect<ReadonlyArray<WorkspaceFile> | undefined, EngineUnavailable | AgentNotProvisioned>
  /** The skills the engine itself would load for the agent, bundled ones included. Works with the gateway stopped. */
  readonly listSkills: (agentId: string) => Effect.Effect<ReadonlyArray<EngineSkill>, EngineCliError | AgentNotProvisioned>
  /**
   * Writes files into the agent's workspace (a template's persona files), each atomically, creating directories;
   * existing files of the same path are replaced, others left alone.
   */
  readonly writeWorkspaceFiles: (
    agentId: string,
    files: ReadonlyArray<WorkspaceFile>
  ) => Effect.Effect<void, EngineUnavailable | AgentNotProvisioned>
  /** One workspace file's bytes, or `undefined` when it does not exist. */
  readonly readWorkspaceFile: (
    agentId: string,
    path: string
  ) => Effect.Effect<Uint8Array | undefined, EngineUnavailable | AgentNotProvisioned>
  /**
   * One workspace file's bytes if it has at most `maxBytes` (a bigger one is not read: TooLarge with its size);
   * Missing when there is no regular file at `path` (inside the workspace, symlinks leading out of it refused).
   */
  readonly readWorkspaceFileWithin: (
    agentId: string,
    path: string,
    maxBytes: number
  ) => Effect.Effect<WorkspaceRead, EngineUnavailable | AgentNotProvisioned>
  /**
   * Runs `sh -c <command>` as the agent: in its workspace (or `cwd`), with its environment (secrets included), inside
   * its sandbox, whether or not its gateway runs. Any exit code is a result; only a command that cannot be started
   * fails (ExecFailed).
   */
  readonly exec: (
    agentId: string,
    request: ExecRequest
  ) => Effect.Effect<ExecResult, WorkingDirectoryOutside | ExecFailed | AgentNotProvisioned>
  /**
   * Every entry of the workspace except excluded ones (whose directories are not descended into), depth first,
   * parents before children, siblings in name order; the workspace root itself is not listed. Works with the
   * gateway running or stopped.
   */
  readonly scanWorkspace: (
    agentId: string,
    options: ScanOptions
  ) => Effect.Effect<ReadonlyArray<WorkspaceEntry>, EngineUnavailable | AgentNotProvisioned>
  /**
   * A workspace file's bytes, streamed; never through a symlink (one anywhere on the path fails, as does a missing
   * file or one that is not a regular file).
   */
  readonly readWorkspaceEntry: (
    agentId: string,
    path: string
  ) => Stream.Stream<Uint8Array, EngineUnavailable | AgentNotProvisioned>
  /**
   * Makes the workspace exactly `entries`: anything not listed is removed (excluded paths kept), directories and
   * files are created or replaced with the given modes, symlinks written as given. Nothing outside the workspace is
   * touched, whatever symlinks it holds. Meant for a stopped gateway; a failure part way leaves a mix, which a
   * second restore repairs.
   */
  readonly restoreWorkspace: (
    agentId: string,
    entries: ReadonlyArray<RestoreEntry>,
    options: RestoreOptions
  ) => Effect.Effect<void, EngineUnavailable | AgentNotProvisioned>
  /** The runtime config (from the running gateway, or its file while stopped), credentials redacted. */
  readonly readConfig: (agentId: string) => Effect.Effect<EngineConfig, ConfigUnreadable | AgentNotProvisioned>
  /**
   * Validates with the engine's own validator, then replaces the runtime config (through the running gateway, or
   * its file while stopped). A redacted marker written back keeps the stored credential; settings the adapter owns
   * (gateway token, port, bind address) must come back unchanged. Returns the new config and hash.
   */
  readonly writeConfig: (
    agentId: string,
    write: ConfigWrite
  ) => Effect.Effect<
    EngineConfig,
    ConfigRejected | ConfigChanged | ConfigSettingOwned | ConfigUnwritable | ConfigUnreadable | AgentNotProvisioned
  >
  /** Runs the engine's own validator (of the agent's engine version) on a candidate config; writes nothing. */
  readonly validateConfig: (
    agentId: string,
    config: unknown
  ) => Effect.Effect<ConfigValidation, ValidatorFailed | AgentNotProvisioned>
  /** The agent's scheduled tasks (the engine's cron, system jobs included, marked); needs a running gateway. */
  readonly listTasks: (
    agentId: string,
    options: { readonly includeDisabled: boolean }
  ) => Effect.Effect<ReadonlyArray<Task>, TasksFailed | AgentNotProvisioned>
  readonly getTask: (agentId: string, taskId: string) => Effect.Effect<Task, TaskNotFound | TasksFailed | AgentNotProvisioned>
  readonly addTask: (agentId: string, spec: TaskSpec) => Effect.Effect<Task, TasksFailed | AgentNotProvisioned>
  /**
   * Changes a task; `enabled` alone may change on a system job, anything else there is SystemTaskProtected (and so
   * is a toggle of a system job the engine keeps on: OpenClaw's heartbeat and skill review).
   */
  readonly updateTask: (
    agentId: string,
    taskId: string,
    patch: TaskPatch
  ) => Effect.Effect<Task, TaskNotFound | SystemTaskProtected | TasksFailed | AgentNotProvisioned>
  readonly removeTask: (
    agentId: string,
    taskId: string
  ) => Effect.Effect<void, TaskNotFound | SystemTaskProtected | TasksFailed | AgentNotProvisioned>
  /** Runs a task now, whatever its schedule; resolves once the run is queued. */
  readonly runTask: (
    agentId: string,
    taskId: string
  ) => Effect.Effect<{ readonly runId: string }, TaskNotFound | TasksFailed | AgentNotProvisioned>
  /** The task's recent runs, newest first, at most `limit`. */
  readonly taskRuns: (
    agentId: string,
    taskId: string,
    limit: number
  ) => Effect.Effect<ReadonlyArray<TaskRun>, TaskNotFound | TasksFailed | AgentNotProvisioned>
  /**
   * Where the agent's own app listening on `port` inside its workspace is reached from this node (the address the
   * app proxy connects to). Nothing is checked about the app itself: whether something listens there is the proxy's
   * to find out. A port the engine uses itself (a gateway's) is AppPortReserved. Where each agent has a network of its
   * own, the endpoint opens connections into that network, and there is none while the agent is down
   * (AppNotRunning).
   */
  readonly appEndpoint: (
    agentId: string,
    port: number
  ) => Effect.Effect<AppEndpoint, AppPortReserved | AppNotRunning | AgentNotProvisioned>
  /**
   * Where the agent's running gateway itself is reached from this node (its own port: the Control UI, its WebSocket,
   * the OpenAI-compatible endpoints), as an app's endpoint is: the agent's host (`<agentId>.<AGENTS_DOMAIN>`) is
   * proxied there. A gateway that is not running (stopped, starting, crashed) is AppNotRunning.
   */
  readonly gatewayEndpoint: (agentId: string) => Effect.Effect<AppEndpoint, AppNotRunning | AgentNotProvisioned>
  /**
   * Makes the agent's messaging channels exactly `channels` from the gateway's next start on (channels not listed
   * are removed, with their plugins' settings); a running gateway is not restarted. Tokens are expected in the
   * gateway's environment (`setEnvironment`) under `EngineChannels.tokenVariable`: nothing secret is written.
   * Writing what is already there changes nothing.
   */
  readonly setChannels: (
    agentId: string,
    channels: ReadonlyArray<ChannelSpec>
  ) => Effect.Effect<void, ChannelsUnavailable | AgentNotProvisioned>
  /** The channels as the engine runs them: from the running gateway (configured, running, token status, linked). */
  readonly channelStatus: (agentId: string) => Effect.Effect<ReadonlyArray<ChannelStatus>, ChannelsUnavailable | AgentNotProvisioned>
  /**
   * The senders waiting on the channel for the owner's approval (its DM policy is `pairing`), oldest first; expired
   * requests are not listed. Asks the gateway, so it must be running.
   */
  readonly listChannelPairing: (
    agentId: string,
    channel: Channel.ChannelName
  ) => Effect.Effect<ReadonlyArray<ChannelPairingRequest>, ChannelsUnavailable | AgentNotProvisioned>
  /**
   * Approves the pending request with this code (an upper-case code of letters and digits: callers check it): its
   * sender may write to the agent from now on. The approved sender's id is returned. Asks the gateway, so it must be
   * running.
   */
  readonly approveChannelPairing: (
    agentId: string,
    channel: Channel.ChannelName,
    code: string
  ) => Effect.Effect<{ readonly senderId: string }, UnknownPairingCode | ChannelsUnavailable | AgentNotProvisioned>
  /**
   * Starts linking the agent's WhatsApp channel to a phone: the engine asks WhatsApp for a login and answers with the
   * QR code to scan (`waiting`), or `linked` when a phone is linked already (with `force`, that link is dropped and a
   * new code made), or `failed` with the engine's reason (WhatsApp unreachable, say). A login already under way
   * answers with its current code. Asks the gateway, so it must be running with the channel configured.
   */
  readonly startWhatsAppLink: (
    agentId: string,
    options: { readonly force: boolean }
  ) => Effect.Effect<WhatsAppLink, ChannelsUnavailable | AgentNotProvisioned>
  /**
   * Where the link stands now, without waiting for it: the login's current code while it waits (a new one as
   * WhatsApp refreshes it), `linked` once a phone scanned it (and from then on), or what ended it.
   */
  readonly whatsAppLink: (agentId: string) => Effect.Effect<WhatsAppLink, ChannelsUnavailable | AgentNotProvisioned>
  /**
   * One chat turn: sends the message to the agent's running gateway and streams the reply (deltas, then `done` with
   * the whole reply once). The stream fails with ChatUnavailable when the gateway is not running, ChatTimedOut after
   * `request.timeoutMs`, ChatFailed when the turn itself fails. Interrupting the stream aborts the turn.
   */
  readonly chat: (
    agentId: string,
    request: ChatRequest
  ) => Stream.Stream<ChatEvent, ChatFailed | ChatTimedOut | ChatUnavailable | AgentNotProvisioned>
  /** The agent's chat sessions, most recently changed first; needs a running gateway. */
  readonly chatSessions: (agentId: string) => Effect.Effect<ReadonlyArray<ChatSession>, ChatFailed | ChatUnavailable | AgentNotProvisioned>
  /** A session's messages, oldest first (at most `limit`, the newest kept); needs a running gateway. */
  readonly chatHistory: (
    agentId: string,
    sessionKey: string,
    limit: number
  ) => Effect.Effect<ReadonlyArray<ChatMessage>, ChatSessionNotFound | ChatFailed | ChatUnavailable | AgentNotProvisioned>
  /** The models the agent's gateway offers, which can answer, and its default; needs a running gateway. */
  readonly listModels: (agentId: string) => Effect.Effect<EngineModels, ChatFailed | ChatUnavailable | AgentNotProvisioned>
  /** Stops the agent and removes everything the engine holds for it. Idempotent. */
  readonly destroy: (agentId: string) => Effect.Effect<void>
}>()("cairn/AgentEngine") {}
