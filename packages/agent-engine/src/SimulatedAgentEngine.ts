/**
 * The AgentEngine port simulated in memory, deterministically, for tests and `ENGINE=simulated`. No process runs:
 * a start puts the agent in `starting`, waits `startDelay` on Effect's Clock (so `TestClock.adjust` drives it) and
 * then marks it `running`. Where it is given a way to listen (`openGateway`: node/SimulatedGateway.ts, a page,
 * `/v1/chat/completions`, a WebSocket echo), each running gateway is a loopback HTTP server for the agent's own host
 * to proxy to. Each launch takes a copy of the agent's environment, as a real process would, and a
 * token rotation relaunches a live gateway, as the real engine must to hand it the token. Each agent's workspace is
 * held in memory as a disk would hold it: files with their modes, folders and symlinks (simulated/WorkspaceStore.ts),
 * skills under `skills/<name>/`, listed as OpenClaw lists them (see `listSkills`). Console commands run in a tiny
 * shell over its files (simulated/MiniShell.ts); the runtime config is a JSON document checked
 * by an imitation of OpenClaw's validator (simulated/ConfigStore.ts, ConfigValidator.ts); scheduled tasks live in a
 * store of the gateway's that outlives restarts and answers only while the gateway runs (simulated/CronStore.ts), and
 * so do chat sessions: a running gateway answers a chat `Echo: <message>`, word by word (simulated/ChatStore.ts). The
 * layer also provides SimulatedEngineControl, built on the same state, to script failures and to look inside.
 */
import { Clock, Context, Deferred, Duration, Effect, Fiber, Layer, Redacted, Semaphore, Stream } from "effect"
import QRCode from "qrcode"
import { AgentEngine, type AgentLimits, type AgentState, type Device, type EngineSkill, type Provisioning, type ProvisionSpec, type WorkspaceFile } from "./AgentEngine.ts"
import {
  AgentNotProvisioned,
  AppNotRunning,
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
import { EngineVersion } from "@cairn/domain"
import * as EngineEnvironment from "./EngineEnvironment.ts"
import * as GatewayLogs from "./GatewayLogs.ts"
import { SimulatedEngineControl, type ConfigOperation } from "./SimulatedEngineControl.ts"
import { ChannelsUnavailable, UnknownPairingCode } from "./Channels.ts"
import { ChatFailed, type ChatEvent, ChatSessionNotFound, ChatTimedOut, ChatUnavailable, configuredModel } from "./Chat.ts"
import * as ChannelStore from "./simulated/Channels.ts"
import * as ChatStore from "./simulated/ChatStore.ts"
import * as ConfigStore from "./simulated/ConfigStore.ts"
import * as ConfigValidator from "./simulated/ConfigValidator.ts"
import * as CronStore from "./simulated/CronStore.ts"
import * as MiniShell from "./simulated/MiniShell.ts"
import * as WorkspaceStore from "./simulated/WorkspaceStore.ts"
import type { ExecRequest } from "./WorkspaceOperations.ts"
import * as WorkspacePath from "./WorkspacePath.ts"

export interface Options {
  /** The installable versions, in any order; `listVersions` returns them oldest first. */
  readonly versions?: ReadonlyArray<string>
  /** The version scenarios use when they do not care which; the newest by default. */
  readonly defaultVersion?: string
  /** How long a gateway takes to become ready. */
  readonly startDelay?: Duration.Input
  /** A lasting scripted failure: the log tail every start of `agentId` fails with, or undefined to let it start. */
  readonly failStartFor?: (agentId: string) => string | undefined
  /** The limits it reports each agent runs under (it enforces none); `defaultAgentLimits` by default. */
  readonly agentLimits?: AgentLimits
  /**
   * Opens something that listens for each agent whose gateway is up, for the agent's own host to reach
   * (`SimulatedGateway.open` of `@cairn/agent-engine/node`: a loopback HTTP server). Without it nothing listens, and
   * `gatewayEndpoint` finds no gateway (AppNotRunning).
   */
  readonly openGateway?: (agentId: string, token: () => string) => Promise<ListeningGateway>
}

/** A simulated agent's gateway that listens: its loopback port, and how to close it. */
export interface ListeningGateway {
  readonly port: number
  /** Stops listening and ends every connection. Idempotent. */
  readonly close: () => Promise<void>
}

/** What the simulation reports, as a node with Cairn's defaults would: 4 GiB, 1 CPU, 512 processes. */
export const defaultAgentLimits: AgentLimits = { memoryBytes: 4 * 1024 ** 3, cpus: 1, pids: 512, diskBytes: 10 * 1024 ** 3 }

export const defaultVersions: ReadonlyArray<string> = ["2026.3.1", "2026.3.8", "2026.4.2"]
export const defaultStartDelay: Duration.Input = "2 seconds"

/** The agent's home, as a real engine would give it (HOME and OPENCLAW_HOME of its processes). */
export const homeOf = (agentId: string) => `/simulated/agents/${agentId}`

/** Where the agent's workspace is, as OpenClaw lays it out under its home: what `pwd` shows in its console. */
export const workspaceRoot = (agentId: string) => `${homeOf(agentId)}/.openclaw/workspace`

/** The port the first simulated gateway is given; each agent provisioned after it gets the next one. */
export const firstPort = 19001

/**
 * The skills every simulated agent has without installing any: a few of OpenClaw's bundled ones, under OpenClaw's
 * own source word, one of them not eligible (it needs a binary the host lacks), as on a fresh real agent.
 */
export const bundledSkills: ReadonlyArray<EngineSkill> = [
  { name: "1password", source: "openclaw-bundled", eligible: false },
  { name: "healthcheck", source: "openclaw-bundled", eligible: true },
  { name: "skill-creator", source: "openclaw-bundled", eligible: true },
  { name: "weather", source: "openclaw-bundled", eligible: true }
]

/**
 * The top-level `key: value` pairs of a SKILL.md's YAML front matter (quotes removed), or undefined without front
 * matter. Enough for `name` and `description`, the two keys OpenClaw requires.
 */
export const frontMatter = (skillMd: string): Readonly<Record<string, string>> | undefined => {
  const lines = skillMd.replace(/^\uFEFF/, "").split(/\r?\n/)
  if (lines[0]?.trim() !== "---") return undefined
  const end = lines.findIndex((line, i) => i > 0 && line.trim() === "---")
  if (end < 0) return undefined
  const fields: Record<string, string> = {}
  for (const line of lines.slice(1, end)) {
    const match = /^([A-Za-z0-9_-]+):\s*(.*?)\s*$/.exec(line)
    if (match === null) continue
    const value = match[2]!
    fields[match[1]!] = /^(["']).*\1$/.test(value) ? value.slice(1, -1) : value
  }
  return fields
}

const isPlainObject = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** A start in progress. Its caller, and any start that joins it, wait on `ready`. */
interface Launch {
  readonly ready: Deferred.Deferred<void, GatewayDidNotStart>
  fiber: Fiber.Fiber<void> | undefined
}

interface Agent {
  version: string
  state: AgentState
  /** Why the gateway crashed, when a test said (`crash(agentId, "oom")`); cleared by its next start. */
  crashReason: "oom" | undefined
  token: Redacted.Redacted<string>
  starts: number
  scriptLaunches: number
  /** By id, so adding a known device moves it; a Map keeps the order devices arrived in. */
  readonly devices: Map<string, { readonly device: Device; readonly list: "pending" | "paired" }>
  launch: Launch | undefined
  /** What the next launch gets from `setEnvironment`, redacted until then. */
  environment: Readonly<Record<string, Redacted.Redacted<string>>>
  /** What the last launch got: the copy a real process would hold; undefined until the first launch. */
  launchedWith: Readonly<Record<string, string>> | undefined
  /** Its files, folders and symlinks; an installed skill's folder exists even when empty, as on disk. */
  readonly workspace: WorkspaceStore.WorkspaceStore
  /** The port its gateway listens on (in its config, and in the error of a scheduler that is not reachable). */
  readonly port: number
  /** Its runtime config: the current version, credentials included. */
  config: ConfigStore.StoredConfig
  /** Its scheduled tasks: kept by the gateway's store, so they outlive restarts. */
  readonly cron: CronStore.CronStore
  /** The console commands run, oldest first. */
  readonly execLog: Array<ExecRequest>
  /** Its messaging channels: for the next launch, and as the last launch took them (simulated/Channels.ts). */
  readonly channels: ChannelStore.ChannelStore
  /** Its gateway's log, as OpenClaw writes it (JSON lines), oldest first. */
  readonly log: Array<string>
  /** Its chat sessions: kept by the gateway's store, so they outlive restarts (simulated/ChatStore.ts). */
  readonly chats: ChatStore.ChatStore
}

/** A line as OpenClaw's file logger (tslog) writes it. */
const logLine = (level: "INFO" | "WARN" | "ERROR", message: string, at: number) =>
  JSON.stringify({ 0: message, _meta: { logLevelName: level, date: new Date(at).toISOString(), name: JSON.stringify({ subsystem: "gateway" }) }, time: new Date(at).toISOString() })

export interface Simulation {
  readonly engine: AgentEngine["Service"]
  readonly control: SimulatedEngineControl["Service"]
}

/** Builds the engine and its control on one shared state; gateways still starting are interrupted with the scope. */
export const make = Effect.fnUntraced(function*(options: Options = {}) {
  const versions = [...(options.versions ?? defaultVersions)].sort(EngineVersion.order)
  const defaultVersion = options.defaultVersion ?? versions[versions.length - 1]
  if (defaultVersion === undefined || !versions.includes(defaultVersion)) {
    return yield* Effect.die(new Error(`SimulatedAgentEngine: default version ${defaultVersion} is not among ${versions.join(", ")}`))
  }
  const startDelay = Duration.fromInputUnsafe(options.startDelay ?? defaultStartDelay)
  const scope = yield* Effect.scope
  // Transitions run under one lock so that a stop never lands halfway through a start; nothing waits while holding it.
  const lock = yield* Semaphore.make(1)
  const withLock = Semaphore.withPermit(lock)

  const agents = new Map<string, Agent>()
  const nextStartFailures = new Map<string, Array<string>>()
  const cliFailures = new Map<string, string>()
  const scriptFailures = new Map<string, string>()
  const execFailures = new Map<string, string>()
  const configFailures = new Map<string, Map<ConfigOperation, string>>()
  const taskFailures = new Map<string, string>()
  const channelFailures = new Map<string, string>()
  /** What the next chat turn of an agent does instead of answering (SimulatedEngineControl's `failNextChat`, `hangNextChat`). */
  const nextChats = new Map<string, { readonly _tag: "fail"; readonly detail: string } | { readonly _tag: "hang" }>()
  let nextPort = firstPort
  let taskIds = 0
  /** UUID-shaped task ids, unique across the engine's agents. */
  const newTaskId = () => {
    const n = ++taskIds
    return `${n.toString(16).padStart(8, "0")}-0000-4000-8000-${n.toString(16).padStart(12, "0")}`
  }
  let engineFailure: { readonly cause: unknown } | undefined
  /**
   * Installs of engine versions held by the control (`holdInstall`): a provision of the version waits for it, and
   * reports the bytes the control last gave. Versions not held install at once.
   */
  const heldInstalls = new Map<string, { installedBytes: number; readonly done: Deferred.Deferred<void> }>()
  /** While starts are held (`holdStarts`), a launching gateway is not ready before they are released. */
  let startGate: Deferred.Deferred<void> | undefined
  /** Agents on their way up (provisioning, or a gateway start), since when, and on which version. */
  const bringingUp = new Map<string, { readonly since: number; readonly version: string }>()
  const comingUp = (agentId: string, version: string) =>
    Effect.flatMap(Clock.currentTimeMillis, (since) =>
      Effect.sync(() => {
        if (!bringingUp.has(agentId)) bringingUp.set(agentId, { since, version })
      }))

  const find = (agentId: string) =>
    Effect.suspend(() => {
      const agent = agents.get(agentId)
      return agent === undefined ? Effect.fail(new AgentNotProvisioned({ agentId })) : Effect.succeed(agent)
    })

  /** An agent whose gateway answers device calls: running, and no CLI failure scripted for it. */
  const runningForDevices = (agentId: string) =>
    Effect.flatMap(find(agentId), (agent) => {
      const detail = cliFailures.get(agentId)
      if (detail !== undefined) return Effect.fail(new EngineCliError({ agentId, detail }))
      return agent.state === "running"
        ? Effect.succeed(agent)
        : Effect.fail(new EngineCliError({ agentId, detail: `the gateway is not running (${agent.state})` }))
    })

  /** An agent whose gateway answers pairing calls: running, and no CLI or channel failure scripted for it. */
  const runningForPairing = (agentId: string) =>
    Effect.flatMap(find(agentId), (agent) => {
      const detail = cliFailures.get(agentId) ?? channelFailures.get(agentId)
      if (detail !== undefined) return Effect.fail(new ChannelsUnavailable({ agentId, detail }))
      return agent.state === "running"
        ? Effect.succeed(agent)
        : Effect.fail(new ChannelsUnavailable({ agentId, detail: `the gateway is not running (${agent.state})` }))
    })
  /** How many pairing codes the engine has handed out: the next code is `pairingCode(this)`. */
  let pairingCodes = 0

  const engineAvailable = Effect.suspend(() =>
    engineFailure === undefined ? Effect.void : Effect.fail(new EngineUnavailable({ cause: engineFailure.cause }))
  )

  const takeStartFailure = (agentId: string): string | undefined => {
    for (const key of [agentId, "*"]) {
      const queued = nextStartFailures.get(key)
      const logTail = queued?.shift()
      if (queued?.length === 0) nextStartFailures.delete(key)
      if (logTail !== undefined) return logTail
    }
    return options.failStartFor?.(agentId)
  }

  /**
   * The environment of the agent's processes (its gateway, its console commands): the agent's variables under the
   * engine's own, which always win. The simulated engine's own are those a real one sets (a home of the agent's, the
   * gateway token, a PATH).
   */
  const processEnvironment = (agentId: string, agent: Agent): Readonly<Record<string, string>> => ({
    ...EngineEnvironment.reveal(agent.environment),
    HOME: homeOf(agentId),
    PATH: "/usr/local/bin:/usr/bin:/bin",
    OPENCLAW_HOME: homeOf(agentId),
    OPENCLAW_GATEWAY_TOKEN: Redacted.value(agent.token)
  })
  /** Hands a launching gateway its environment. */
  const launchEnvironment = (agentId: string, agent: Agent) => {
    agent.launchedWith = processEnvironment(agentId, agent)
    ChannelStore.launch(agent.channels, agent.launchedWith)
  }

  /** Ends a start in progress: whoever waits on it gets GatewayDidNotStart with `logTail`. */
  const abandonLaunch = (agentId: string, agent: Agent, logTail: string) =>
    Effect.suspend(() => {
      const launch = agent.launch
      if (launch === undefined) return Effect.void
      agent.launch = undefined
      bringingUp.delete(agentId)
      return Deferred.fail(launch.ready, new GatewayDidNotStart({ agentId, logTail })).pipe(
        Effect.andThen(launch.fiber === undefined ? Effect.void : Fiber.interrupt(launch.fiber))
      )
    })

  const writeLog = (agent: Agent, level: "INFO" | "WARN" | "ERROR", message: string) =>
    Effect.map(Clock.currentTimeMillis, (at) => void agent.log.push(logLine(level, message, at)))

  /**
   * The gateways that listen (`options.openGateway`): one per agent whose gateway is up, opened when it comes up and
   * closed when it goes down (a stop, a crash, a destroy, the engine's end).
   */
  const listening = new Map<Agent, Promise<ListeningGateway>>()
  /** Opens the agent's gateway (at once: a stop right after finds it to close), and waits until it listens. */
  const openGateway = (agentId: string, agent: Agent) => {
    const open = options.openGateway
    if (open === undefined) return Effect.void
    let opened = listening.get(agent)
    if (opened === undefined) listening.set(agent, opened = open(agentId, () => Redacted.value(agent.token)))
    return Effect.asVoid(Effect.promise(() => opened))
  }
  /** Closes the agent's gateway, not waiting for its connections to end (a stop does not wait on a real process's either). */
  const closeGateway = (agent: Agent) =>
    Effect.sync(() => {
      const opened = listening.get(agent)
      listening.delete(agent)
      void opened?.then((gateway) => gateway.close(), () => undefined)
    })
  yield* Effect.addFinalizer(() =>
    Effect.promise(() => Promise.all([...listening.values()].map((opened) => opened.then((gateway) => gateway.close(), () => undefined))))
  )

  const halt = (agentId: string, agent: Agent) =>
    Effect.suspend(() => {
      const wasRunning = agent.state === "running"
      agent.state = "stopped"
      return (wasRunning ? writeLog(agent, "INFO", "received SIGTERM; shutting down") : Effect.void).pipe(
        Effect.andThen(closeGateway(agent)),
        Effect.andThen(abandonLaunch(agentId, agent, "the gateway was stopped before it was ready"))
      )
    })

  /**
   * Launches the gateway (under the lock) and returns what the caller must then wait on (outside it). The wait for
   * readiness runs in a fiber of the engine's own, so a caller that gives up does not leave the agent `starting`.
   */
  const launch = Effect.fnUntraced(function*(agentId: string, agent: Agent): Effect.fn.Return<Effect.Effect<void, GatewayDidNotStart>> {
    if (agent.state === "running") return Effect.void
    if (agent.launch !== undefined) return Deferred.await(agent.launch.ready)
    agent.starts++
    launchEnvironment(agentId, agent)
    const logTail = takeStartFailure(agentId)
    if (logTail !== undefined) {
      // A gateway that refuses to start exits on its own, as a crash does.
      agent.state = "crashed"
      bringingUp.delete(agentId)
      return Effect.fail(new GatewayDidNotStart({ agentId, logTail }))
    }
    agent.state = "starting"
    agent.crashReason = undefined
    yield* comingUp(agentId, agent.version)
    const current: Launch = { ready: yield* Deferred.make<void, GatewayDidNotStart>(), fiber: undefined }
    agent.launch = current
    const gate = startGate
    current.fiber = yield* Effect.sleep(startDelay).pipe(
      Effect.andThen(gate === undefined ? Effect.void : Deferred.await(gate)),
      Effect.andThen(Effect.suspend(() => {
        // A stop, crash or destroy clears the launch before it interrupts this fiber, and the sleep may end in between:
        // the launch is then no longer current, and its waiters already have their answer.
        if (agent.launch !== current) return Effect.void
        agent.launch = undefined
        agent.state = "running"
        bringingUp.delete(agentId)
        return openGateway(agentId, agent).pipe(
          Effect.andThen(writeLog(agent, "INFO", `listening on ws://127.0.0.1:${agent.port} (PID ${agent.starts})`)),
          Effect.andThen(Deferred.succeed(current.ready, undefined))
        )
      })),
      Effect.asVoid,
      Effect.forkIn(scope)
    )
    return Deferred.await(current.ready)
  })

  /**
   * A workspace operation's agent: AgentNotProvisioned, then EngineUnavailable while the engine is failed. Paths are
   * checked before (a bad one is a defect), as the real adapter does before it touches the disk.
   */
  const findWorkspace = (agentId: string) => Effect.tap(find(agentId), () => engineAvailable)

  /** Writing `path` as a file must not meet a file or symlink where a folder goes, nor a folder where the file goes. */
  const writableAt = (workspace: WorkspaceStore.WorkspaceStore, path: string) =>
    Effect.suspend(() => {
      const conflict = workspace.conflictAt(path)
      return conflict === undefined ? Effect.void : Effect.fail(new EngineUnavailable({ cause: new Error(conflict) }))
    })

  /** Scripts and files starting with a shebang are executable, as the real adapter writes them. */
  const modeOf = (file: WorkspaceFile) => (WorkspacePath.isExecutable(file) ? 0o755 : WorkspaceStore.fileMode)

  /** The workspace skills OpenClaw would load: folders under `skills/` (dot-folders skipped) with a valid SKILL.md. */
  const workspaceSkills = (agent: Agent): ReadonlyArray<EngineSkill> => {
    const decoder = new TextDecoder()
    const found = new Map<string, EngineSkill>()
    const folders = [...agent.workspace.files.keys()]
      .flatMap((key) => {
        const match = /^skills\/([^/]+)\/SKILL\.md$/.exec(key)
        return match === null || match[1]!.startsWith(".") ? [] : [match[1]!]
      })
      .sort()
    for (const folder of folders) {
      const fields = frontMatter(decoder.decode(agent.workspace.files.get(`skills/${folder}/SKILL.md`)))
      // OpenClaw skips a SKILL.md without a description; without a name, it names the skill after its folder.
      if (fields?.["description"] === undefined || fields["description"] === "") continue
      const name = fields["name"] || folder
      // Of two folders giving the same name, OpenClaw keeps the later one.
      found.set(name, { name, source: "workspace", eligible: true })
    }
    return [...found.values()]
  }

  /** A config operation's agent: AgentNotProvisioned, then ConfigUnreadable while reading its config is scripted to fail. */
  const configOf = (agentId: string) =>
    Effect.tap(find(agentId), () => {
      const detail = configFailures.get(agentId)?.get("read")
      return detail === undefined ? Effect.void : Effect.fail(new ConfigUnreadable({ agentId, detail }))
    })

  /**
   * A task operation's scheduler and the time: it lives in the gateway, so a gateway that is not running answers as
   * OpenClaw's CLI does when it cannot connect.
   */
  const scheduler = Effect.fnUntraced(function*(agentId: string) {
    const agent = yield* find(agentId)
    const detail = taskFailures.get(agentId)
    if (detail !== undefined) return yield* new TasksFailed({ agentId, detail })
    if (agent.state !== "running") {
      return yield* new TasksFailed({ agentId, detail: `Gateway not reachable at ws://127.0.0.1:${agent.port} (ECONNREFUSED).` })
    }
    return { cron: agent.cron, now: yield* Clock.currentTimeMillis }
  })

  /** A chat operation's agent: its gateway must be running to answer. */
  const chatting = (agentId: string) =>
    Effect.flatMap(find(agentId), (agent) =>
      agent.state === "running"
        ? Effect.succeed(agent)
        : Effect.fail(new ChatUnavailable({ agentId, detail: `the gateway is not running (${agent.state})` })))

  const isoNow = Effect.map(Clock.currentTimeMillis, (millis) => new Date(millis).toISOString())

  /** Adds a provisioned agent, stopped (under the lock); one provisioned meanwhile is left as it is. */
  const addAgent = (agentId: string, spec: ProvisionSpec) =>
    Effect.gen(function*() {
      if (agents.has(agentId)) return
      const port = nextPort++
      const now = yield* Clock.currentTimeMillis
      agents.set(agentId, {
        version: spec.version,
        state: "stopped",
        crashReason: undefined,
        token: spec.gatewayToken,
        starts: 0,
        scriptLaunches: 0,
        devices: new Map(),
        launch: undefined,
        environment: {},
        launchedWith: undefined,
        workspace: new WorkspaceStore.WorkspaceStore(),
        port,
        config: ConfigStore.initial({ home: homeOf(agentId), port, token: Redacted.value(spec.gatewayToken) }),
        cron: CronStore.make(newTaskId, now),
        execLog: [],
        channels: ChannelStore.empty(),
        log: [],
        chats: new ChatStore.ChatStore()
      })
    })

  const engine = AgentEngine.of({
    name: "simulated",
    agentLimits: options.agentLimits ?? defaultAgentLimits,
    listVersions: engineAvailable.pipe(Effect.map(() => [...versions])),
    // Installs are instant here, but for those the control holds.
    isInstalled: (version) => Effect.sync(() => versions.includes(version) && !heldInstalls.has(version)),
    provision: Effect.fnUntraced(function*(agentId, spec) {
      yield* engineAvailable
      if (!versions.includes(spec.version)) return yield* new VersionNotOffered({ version: spec.version })
      if (agents.has(agentId)) return
      yield* comingUp(agentId, spec.version)
      // A held install is waited for outside the lock, as a real install is: other agents go on meanwhile.
      const held = heldInstalls.get(spec.version)
      if (held !== undefined) {
        yield* Deferred.await(held.done).pipe(Effect.onInterrupt(() => Effect.sync(() => void bringingUp.delete(agentId))))
      }
      yield* withLock(addAgent(agentId, spec))
    }),
    provisioning: (agentId) =>
      Effect.flatMap(Clock.currentTimeMillis, (now): Effect.Effect<Provisioning | undefined> =>
        Effect.sync(() => {
          const up = bringingUp.get(agentId)
          if (up === undefined) return undefined
          const agent = agents.get(agentId)
          const elapsedMs = now - up.since
          if (agent === undefined) {
            const held = heldInstalls.get(up.version)
            return { phase: "installing_engine", version: up.version, elapsedMs, ...(held === undefined ? {} : { installedBytes: held.installedBytes }) }
          }
          return agent.state === "starting" ? { phase: "starting_gateway", version: agent.version, elapsedMs } : undefined
        })),
    start: Effect.fnUntraced(function*(agentId) {
      return yield* launch(agentId, yield* find(agentId))
    }, withLock, Effect.flatten),
    readLogs: (agentId, request) =>
      Effect.map(find(agentId), (agent) => {
        const redact = GatewayLogs.redactor([...Object.values(EngineEnvironment.reveal(agent.environment)), Redacted.value(agent.token)])
        const from = "lines" in request
          ? Math.max(0, agent.log.length - Math.min(request.lines, GatewayLogs.maxLogLines))
          : request.after > agent.log.length ? 0 : request.after
        const lines = agent.log.slice(from, from + GatewayLogs.maxLogLines)
        return { entries: lines.map((line) => GatewayLogs.parseLogLine(redact(line))), cursor: from + lines.length }
      }),
    stop: Effect.fnUntraced(function*(agentId) {
      yield* halt(agentId, yield* find(agentId))
    }, withLock),
    restart: Effect.fnUntraced(
      function*(agentId, options = {}) {
        const agent = yield* find(agentId)
        const target = options.version ?? agent.version
        if (options.version !== undefined) {
          if (!versions.includes(target)) return yield* new VersionNotOffered({ version: target })
          if (EngineVersion.isOlder(target, agent.version)) {
            return yield* new DowngradeRefused({ from: agent.version, to: target })
          }
        }
        yield* halt(agentId, agent)
        agent.version = target
        return yield* launch(agentId, agent)
      },
      withLock,
      Effect.flatten,
      (effect, agentId) =>
        Effect.catchTag(effect, "GatewayDidNotStart", (cause) => Effect.fail(new GatewayRestartFailed({ agentId, cause })))
    ),
    status: (agentId) =>
      Effect.map(find(agentId), (agent) => ({
        state: agent.state,
        version: agent.version,
        ...(agent.state === "crashed" && agent.crashReason !== undefined ? { reason: agent.crashReason } : {})
      })),
    listDevices: Effect.fnUntraced(function*(agentId) {
      const agent = yield* runningForDevices(agentId)
      const all = [...agent.devices.values()]
      return {
        pending: all.filter((entry) => entry.list === "pending").map((entry) => entry.device),
        paired: all.filter((entry) => entry.list === "paired").map((entry) => entry.device)
      }
    }),
    answerPairing: Effect.fnUntraced(function*(agentId, requestId, answer) {
      const agent = yield* runningForDevices(agentId)
      const entry = agent.devices.get(requestId)
      if (entry === undefined || entry.list !== "pending") return yield* new UnknownDevice({ agentId, id: requestId })
      agent.devices.delete(requestId)
      if (answer === "approve") agent.devices.set(requestId, { device: entry.device, list: "paired" })
    }),
    removeDevice: Effect.fnUntraced(function*(agentId, deviceId) {
      const agent = yield* runningForDevices(agentId)
      if (agent.devices.get(deviceId)?.list !== "paired") return yield* new UnknownDevice({ agentId, id: deviceId })
      agent.devices.delete(deviceId)
    }),
    relaunchScripts: Effect.fnUntraced(function*(agentId) {
      const agent = yield* find(agentId)
      const detail = scriptFailures.get(agentId)
      if (detail !== undefined) return yield* new ScriptsFailedToLaunch({ agentId, detail })
      agent.scriptLaunches++
    }),
    // The real engine restarts a live gateway to hand it the new token, so it also takes the current environment.
    // Simulated, the relaunch is instant: the agent stays as it was, and a start in progress goes on.
    rotateGatewayToken: Effect.fnUntraced(function*(agentId, token) {
      const agent = yield* find(agentId)
      agent.token = token
      agent.config = ConfigStore.withToken(agent.config, Redacted.value(token))
      if (agent.state !== "running" && agent.state !== "starting") return
      agent.starts++
      launchEnvironment(agentId, agent)
    }, withLock),
    setEnvironment: Effect.fnUntraced(function*(agentId, environment) {
      const agent = yield* find(agentId)
      const { refused, variables } = EngineEnvironment.admit(environment)
      agent.environment = variables
      if (refused.length > 0) yield* Effect.logWarning(EngineEnvironment.refusedWarning(agentId, refused))
    }),
    // The whole swap happens in one step, so the agent sees the old folder or the new one: never a mix.
    installSkill: Effect.fnUntraced(function*(agentId, skill) {
      const name = yield* WorkspacePath.requireSkillName(skill.name)
      const files = yield* WorkspacePath.requireFileSet(skill.files)
      const agent = yield* findWorkspace(agentId)
      const folder = WorkspacePath.skillFolder(name)
      // A file at `skills` stops the install, as on disk; one at `skills/<name>` is replaced like an old folder.
      if (agent.workspace.files.has("skills")) return yield* new EngineUnavailable({ cause: new Error("skills is a file, not a folder") })
      agent.workspace.removeTree(folder)
      agent.workspace.makeFolder(folder)
      for (const file of files) agent.workspace.writeFile(`${folder}/${file.path}`, file.content, modeOf(file))
    }),
    removeSkill: Effect.fnUntraced(function*(agentId, name) {
      const folder = WorkspacePath.skillFolder(yield* WorkspacePath.requireSkillName(name))
      const agent = yield* findWorkspace(agentId)
      agent.workspace.removeTree(folder)
    }),
    readSkill: Effect.fnUntraced(function*(agentId, name) {
      const folder = WorkspacePath.skillFolder(yield* WorkspacePath.requireSkillName(name))
      const agent = yield* findWorkspace(agentId)
      if (!agent.workspace.exists(folder)) return undefined
      // A file where the folder should be holds no skill files, as on disk.
      if (!agent.workspace.isFolder(folder)) return []
      const files: Array<WorkspaceFile> = []
      for (const [path, content] of agent.workspace.files) {
        if (path.startsWith(`${folder}/`)) files.push({ path: path.slice(folder.length + 1), content: content.slice() })
      }
      // Symlinks are not followed: each reads as a file naming its target, as the real adapter reports them.
      for (const [path, target] of agent.workspace.symlinksUnder(folder)) {
        files.push({ path: path.slice(folder.length + 1), content: new TextEncoder().encode(`symlink:${target}`) })
      }
      return files.sort(WorkspacePath.byPath)
    }),
    // What `openclaw skills list` shows: the bundled skills, overridden by workspace skills of the same name.
    listSkills: Effect.fnUntraced(function*(agentId) {
      const agent = yield* find(agentId)
      const detail = cliFailures.get(agentId)
      if (detail !== undefined) return yield* new EngineCliError({ agentId, detail })
      const skills = new Map(bundledSkills.map((skill) => [skill.name, skill]))
      for (const skill of workspaceSkills(agent)) skills.set(skill.name, skill)
      return [...skills.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    }),
    writeWorkspaceFiles: Effect.fnUntraced(function*(agentId, files) {
      const checked = yield* WorkspacePath.requireFileSet(files)
      const agent = yield* findWorkspace(agentId)
      for (const file of checked) {
        yield* writableAt(agent.workspace, file.path)
        agent.workspace.writeFile(file.path, file.content, modeOf(file))
      }
    }),
    readWorkspaceFile: Effect.fnUntraced(function*(agentId, path) {
      const checked = yield* WorkspacePath.requireRelativePath(path)
      return (yield* findWorkspace(agentId)).workspace.files.get(checked)?.slice()
    }),
    readWorkspaceFileWithin: Effect.fnUntraced(function*(agentId, path, maxBytes) {
      const checked = yield* WorkspacePath.requireRelativePath(path)
      const content = (yield* findWorkspace(agentId)).workspace.files.get(checked)
      if (content === undefined) return { _tag: "Missing" } as const
      if (content.length > maxBytes) return { _tag: "TooLarge", size: content.length } as const
      return { _tag: "Found", content: content.slice() } as const
    }),
    // The mini shell reads the workspace as it is while it runs; it needs no gateway.
    exec: Effect.fnUntraced(function*(agentId, request) {
      const agent = yield* find(agentId)
      const root = workspaceRoot(agentId)
      const workspace: MiniShell.ShellWorkspace = { files: agent.workspace.files, folders: agent.workspace.folderPaths() }
      const cwd = MiniShell.workingDirectory(workspace, root, request.cwd)
      if (cwd === undefined) return yield* new WorkingDirectoryOutside({ agentId, cwd: request.cwd ?? "" })
      const detail = execFailures.get(agentId)
      if (detail !== undefined) return yield* new ExecFailed({ agentId, detail })
      agent.execLog.push({ ...request })
      return yield* MiniShell.run(request.command, {
        workspace,
        root,
        cwd,
        environment: processEnvironment(agentId, agent),
        timeoutMs: request.timeoutMs,
        maxOutputBytes: request.maxOutputBytes
      })
    }),
    scanWorkspace: Effect.fnUntraced(function*(agentId, options) {
      return (yield* findWorkspace(agentId)).workspace.scan(options.exclude)
    }),
    readWorkspaceEntry: (agentId, path) =>
      Stream.unwrap(Effect.gen(function*() {
        const checked = yield* WorkspacePath.requireRelativePath(path)
        const content = (yield* findWorkspace(agentId)).workspace.readEntry(checked)
        if (typeof content === "string") return yield* new EngineUnavailable({ cause: new Error(content) })
        return Stream.succeed(content.slice())
      })),
    // The tree is worked out first, the content of the files to write read next, and the workspace replaced in one step.
    restoreWorkspace: Effect.fnUntraced(function*(agentId, entries, options) {
      const tree = yield* WorkspacePath.requireTree(entries)
      const agent = yield* findWorkspace(agentId)
      const plan = agent.workspace.plan(tree, options.exclude)
      const written = new Map<string, Uint8Array>()
      for (const file of plan.toWrite) {
        written.set(file.path, yield* Stream.mkUint8Array(file.content).pipe(Effect.mapError((cause) => new EngineUnavailable({ cause }))))
      }
      yield* engineAvailable
      agent.workspace.restore(plan, written)
    }),
    readConfig: Effect.fnUntraced(function*(agentId) {
      const agent = yield* configOf(agentId)
      return { config: ConfigStore.redact(agent.config.config), hash: agent.config.hash }
    }),
    // The checks run in the order a write meets them on OpenClaw: its base hash, Cairn's own settings, the validator.
    writeConfig: Effect.fnUntraced(function*(agentId, write) {
      const agent = yield* configOf(agentId)
      if (write.baseHash !== undefined && write.baseHash !== agent.config.hash) return yield* new ConfigChanged({ agentId })
      if (!isPlainObject(write.config)) {
        return yield* new ConfigRejected({ agentId, issues: ConfigValidator.issuesOf(write.config) })
      }
      const restored = ConfigStore.restore(write.config, agent.config.config)
      const owned = ConfigStore.keepOwned(restored.config, agent.config.config)
      if (owned.changed.length > 0) return yield* new ConfigSettingOwned({ agentId, paths: owned.changed })
      const issues = [...restored.issues, ...ConfigValidator.issuesOf(owned.config)]
      if (issues.length > 0) return yield* new ConfigRejected({ agentId, issues })
      const detail = configFailures.get(agentId)?.get("write")
      if (detail !== undefined) return yield* new ConfigUnwritable({ agentId, detail })
      agent.config = ConfigStore.store(owned.config)
      return { config: ConfigStore.redact(agent.config.config), hash: agent.config.hash }
    }),
    validateConfig: Effect.fnUntraced(function*(agentId, config) {
      yield* find(agentId)
      const detail = configFailures.get(agentId)?.get("validate")
      if (detail !== undefined) return yield* new ValidatorFailed({ agentId, detail })
      return ConfigValidator.validate(config, `${homeOf(agentId)}/.openclaw/openclaw.json`)
    }),
    listTasks: Effect.fnUntraced(function*(agentId, options) {
      const { cron, now } = yield* scheduler(agentId)
      return cron.list(now, options.includeDisabled)
    }),
    getTask: Effect.fnUntraced(function*(agentId, taskId) {
      const { cron, now } = yield* scheduler(agentId)
      const task = cron.get(taskId, now)
      if (task === undefined) return yield* new TaskNotFound({ agentId, taskId })
      return task
    }),
    addTask: Effect.fnUntraced(function*(agentId, spec) {
      const { cron, now } = yield* scheduler(agentId)
      const task = cron.add(spec, now)
      if (task instanceof CronStore.Refused) return yield* new TasksFailed({ agentId, detail: task.detail })
      return task
    }),
    updateTask: Effect.fnUntraced(function*(agentId, taskId, patch) {
      const { cron, now } = yield* scheduler(agentId)
      const task = cron.update(taskId, patch, now)
      if (task === "missing") return yield* new TaskNotFound({ agentId, taskId })
      if (task === "protected") return yield* new SystemTaskProtected({ agentId, taskId })
      if (task instanceof CronStore.Refused) return yield* new TasksFailed({ agentId, detail: task.detail })
      return task
    }),
    removeTask: Effect.fnUntraced(function*(agentId, taskId) {
      const { cron } = yield* scheduler(agentId)
      const removed = cron.remove(taskId)
      if (removed === "missing") return yield* new TaskNotFound({ agentId, taskId })
      if (removed === "protected") return yield* new SystemTaskProtected({ agentId, taskId })
    }),
    runTask: Effect.fnUntraced(function*(agentId, taskId) {
      const { cron, now } = yield* scheduler(agentId)
      const run = cron.run(taskId, now)
      if (run === "missing") return yield* new TaskNotFound({ agentId, taskId })
      return run
    }),
    taskRuns: Effect.fnUntraced(function*(agentId, taskId, limit) {
      const { cron } = yield* scheduler(agentId)
      const runs = cron.runs(taskId, limit)
      if (runs === "missing") return yield* new TaskNotFound({ agentId, taskId })
      return runs
    }),

    // Its gateways listen nowhere, so no port is the engine's own; an app runs on this machine's loopback.
    appEndpoint: (agentId, port) => Effect.as(find(agentId), { host: "127.0.0.1", port }),

    // The gateway that listens while the agent runs, where the engine was given a way to listen (`openGateway`).
    gatewayEndpoint: (agentId) =>
      Effect.flatMap(find(agentId), (agent): Effect.Effect<{ readonly host: string; readonly port: number }, AppNotRunning> => {
        const opened = listening.get(agent)
        if (agent.state !== "running" || opened === undefined) return Effect.fail(new AppNotRunning({ agentId, port: agent.port }))
        return Effect.map(Effect.promise(() => opened), (gateway) => ({ host: "127.0.0.1", port: gateway.port }))
      }),

    // Held for the next launch, which takes them with its environment (simulated/Channels.ts).
    setChannels: (agentId, channels) =>
      Effect.flatMap(find(agentId), (agent) => {
        const failure = channelFailures.get(agentId)
        if (failure !== undefined) return Effect.fail(new ChannelsUnavailable({ agentId, detail: failure }))
        agent.channels.next = [...channels]
        return Effect.void
      }),
    channelStatus: (agentId) =>
      Effect.flatMap(find(agentId), (agent) => {
        const failure = channelFailures.get(agentId)
        if (failure !== undefined) return Effect.fail(new ChannelsUnavailable({ agentId, detail: failure }))
        return Effect.succeed(ChannelStore.status(agent.channels, agent.state === "running"))
      }),
    listChannelPairing: Effect.fnUntraced(function*(agentId, channel) {
      const agent = yield* runningForPairing(agentId)
      return ChannelStore.pendingPairing(agent.channels, channel, yield* Clock.currentTimeMillis)
    }),
    approveChannelPairing: Effect.fnUntraced(function*(agentId, channel, code) {
      const agent = yield* runningForPairing(agentId)
      const senderId = ChannelStore.approvePairing(agent.channels, channel, code, yield* Clock.currentTimeMillis)
      if (senderId === undefined) return yield* new UnknownPairingCode({ agentId, channel })
      return { senderId }
    }),

    // OpenClaw's QR login only runs with the channel in the running gateway (its plugin's `web.login.*` methods).
    startWhatsAppLink: Effect.fnUntraced(function*(agentId, { force }) {
      const agent = yield* runningForPairing(agentId)
      if (!ChannelStore.runsWhatsApp(agent.channels)) {
        return yield* new ChannelsUnavailable({ agentId, detail: "web.login.start: web login provider is not available" })
      }
      // The code a new login would show, drawn as OpenClaw draws its codes (a 4-module quiet zone, 6 pixels a
      // module): made first, since the login under way, if any, is kept and this one dropped.
      const qr = ChannelStore.whatsAppQr(agentId, agent.channels.whatsapp.logins)
      const qrDataUrl = yield* Effect.promise(() => QRCode.toDataURL(qr, { margin: 4, scale: 6 }))
      return ChannelStore.startWhatsAppLogin(agent.channels, force, { qr, qrDataUrl, startedAtMs: yield* Clock.currentTimeMillis })
    }),
    whatsAppLink: Effect.fnUntraced(function*(agentId) {
      const agent = yield* runningForPairing(agentId)
      if (!ChannelStore.runsWhatsApp(agent.channels)) {
        return yield* new ChannelsUnavailable({ agentId, detail: "web.login.wait: web login provider is not available" })
      }
      return ChannelStore.whatsAppLink(agent.channels, yield* Clock.currentTimeMillis)
    }),

    // A turn is answered at once (unless the control holds or fails it), under the request's timeout on the Clock.
    chat: (agentId, request) =>
      Stream.unwrap(Effect.gen(function*() {
        const agent = yield* chatting(agentId)
        const scripted = nextChats.get(agentId)
        nextChats.delete(agentId)
        const sessionKey = request.sessionKey ?? agent.chats.newKey()
        const model = agent.chats.modelFor(sessionKey, request.model, configuredModel(agent.config.config) ?? ChatStore.defaultModel)
        agent.chats.userSaid(sessionKey, model, request.message, yield* isoNow)
        const turn = Effect.gen(function*() {
          if (scripted?._tag === "hang") return yield* Effect.never
          if (scripted?._tag === "fail") return yield* new ChatFailed({ agentId, detail: scripted.detail })
          const { reply, deltas } = ChatStore.answer(request.message)
          const done = agent.chats.agentSaid(sessionKey, request.message, reply, yield* isoNow)
          const events: Array<ChatEvent> = deltas.map((text) => ({ type: "delta", text }))
          events.push({ type: "done", reply: done })
          return events
        })
        const events = yield* Effect.timeoutOrElse(turn, {
          duration: Duration.millis(request.timeoutMs),
          orElse: () => Effect.fail(new ChatTimedOut({ agentId, timeoutMs: request.timeoutMs }))
        })
        return Stream.fromIterable(events)
      })),
    chatSessions: (agentId) => Effect.map(chatting(agentId), (agent) => agent.chats.list()),
    chatHistory: (agentId, sessionKey, limit) =>
      Effect.flatMap(chatting(agentId), (agent) => {
        const messages = agent.chats.history(sessionKey, limit)
        return messages === undefined ? Effect.fail(new ChatSessionNotFound({ agentId, sessionKey })) : Effect.succeed(messages)
      }),
    listModels: (agentId) => Effect.map(chatting(agentId), (agent) => ChatStore.modelsOf(agent.config.config)),
    destroy: (agentId) =>
      Effect.suspend(() => {
        const agent = agents.get(agentId)
        bringingUp.delete(agentId)
        if (agent === undefined) return Effect.void
        agents.delete(agentId)
        return halt(agentId, agent)
      }).pipe(withLock)
  })

  const control = SimulatedEngineControl.of({
    defaultVersion,
    failNextStart: (agentId, logTail) =>
      Effect.sync(() => {
        nextStartFailures.set(agentId, [...(nextStartFailures.get(agentId) ?? []), logTail])
      }),
    failCli: (agentId, detail) => Effect.sync(() => void cliFailures.set(agentId, detail)),
    failScripts: (agentId, detail) => Effect.sync(() => void scriptFailures.set(agentId, detail)),
    clearFailures: (agentId) =>
      Effect.sync(() => {
        nextStartFailures.delete(agentId)
        cliFailures.delete(agentId)
        scriptFailures.delete(agentId)
        execFailures.delete(agentId)
        configFailures.delete(agentId)
        taskFailures.delete(agentId)
        channelFailures.delete(agentId)
        nextChats.delete(agentId)
      }),
    failExec: (agentId, detail) => Effect.sync(() => void execFailures.set(agentId, detail)),
    failChannels: (agentId, detail) => Effect.sync(() => void channelFailures.set(agentId, detail)),
    failNextChat: (agentId, detail) => Effect.sync(() => void nextChats.set(agentId, { _tag: "fail", detail })),
    hangNextChat: (agentId) => Effect.sync(() => void nextChats.set(agentId, { _tag: "hang" })),
    execLog: (agentId) => Effect.map(find(agentId), (agent) => agent.execLog.map((request) => ({ ...request }))),
    failConfig: (agentId, operation, detail) =>
      Effect.sync(() => {
        const failures = configFailures.get(agentId) ?? new Map<ConfigOperation, string>()
        failures.set(operation, detail)
        configFailures.set(agentId, failures)
      }),
    storedConfig: (agentId) => Effect.map(find(agentId), (agent) => agent.config.config),
    failTasks: (agentId, detail) => Effect.sync(() => void taskFailures.set(agentId, detail)),
    failEngine: (cause) => Effect.sync(() => void (engineFailure = { cause })),
    restoreEngine: Effect.sync(() => void (engineFailure = undefined)),
    offerVersion: (version) =>
      Effect.sync(() => {
        if (!versions.includes(version)) versions.push(version)
        versions.sort(EngineVersion.order)
      }),
    holdInstall: (version) =>
      Effect.sync(() => {
        if (!heldInstalls.has(version)) heldInstalls.set(version, { installedBytes: 0, done: Deferred.makeUnsafe<void>() })
      }),
    reportInstall: (version, installedBytes) =>
      Effect.sync(() => {
        const held = heldInstalls.get(version)
        if (held !== undefined) held.installedBytes = installedBytes
      }),
    finishInstall: (version) =>
      Effect.suspend(() => {
        const held = heldInstalls.get(version)
        if (held === undefined) return Effect.void
        heldInstalls.delete(version)
        return Deferred.succeed(held.done, undefined)
      }),
    holdStarts: Effect.sync(() => {
      if (startGate === undefined) startGate = Deferred.makeUnsafe<void>()
    }),
    releaseStarts: Effect.suspend(() => {
      const gate = startGate
      startGate = undefined
      return gate === undefined ? Effect.void : Deferred.succeed(gate, undefined)
    }),
    crash: Effect.fnUntraced(function*(agentId, reason?: "oom") {
      const agent = yield* find(agentId)
      if (agent.state !== "running" && agent.state !== "starting") return
      if (agent.state === "running") yield* writeLog(agent, "ERROR", reason === "oom" ? "killed (out of memory)" : "exited unexpectedly")
      agent.state = "crashed"
      agent.crashReason = reason
      yield* closeGateway(agent)
      yield* abandonLaunch(agentId, agent, "the gateway process exited before it was ready")
    }, withLock),
    addDevice: Effect.fnUntraced(function*(agentId, device, list) {
      const agent = yield* find(agentId)
      agent.devices.delete(device.id)
      agent.devices.set(device.id, { device, list })
    }),
    requestChannelPairing: (agentId, channel, senderId) =>
      Effect.flatMap(find(agentId), (agent) =>
        Effect.map(Clock.currentTimeMillis, (nowMs) =>
          ChannelStore.requestPairing(agent.channels, channel, senderId, nowMs, () => ChannelStore.pairingCode(pairingCodes++)))),
    approvedChannelSenders: (agentId, channel) => Effect.map(find(agentId), (agent) => ChannelStore.approvedSenders(agent.channels, channel)),
    scanWhatsAppQr: (agentId) => Effect.map(find(agentId), (agent) => ChannelStore.scanWhatsAppQr(agent.channels)),
    failWhatsAppLogin: (agentId, reason) => Effect.map(find(agentId), (agent) => ChannelStore.failWhatsAppLogin(agent.channels, reason)),
    startCount: (agentId) => Effect.map(find(agentId), (agent) => agent.starts),
    writeGatewayLog: (agentId, line) => Effect.map(find(agentId), (agent) => void agent.log.push(line)),
    scriptLaunches: (agentId) => Effect.map(find(agentId), (agent) => agent.scriptLaunches),
    currentToken: (agentId) => Effect.map(find(agentId), (agent) => agent.token),
    environmentOf: (agentId) => Effect.sync(() => agents.get(agentId)?.launchedWith),
    editWorkspaceFile: Effect.fnUntraced(function*(agentId, path, content) {
      const agent = yield* find(agentId)
      const checked = yield* WorkspacePath.requireRelativePath(path)
      agent.workspace.editFile(checked, content)
    })
  })

  return { engine, control } satisfies Simulation
})

/** Provides AgentEngine and the SimulatedEngineControl that drives it. */
export const layer = (options: Options = {}): Layer.Layer<AgentEngine | SimulatedEngineControl> =>
  Layer.effectContext(
    Effect.map(make(options), ({ control, engine }) =>
      Context.make(AgentEngine, engine).pipe(Context.add(SimulatedEngineControl, control)))
  )
