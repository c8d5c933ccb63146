/**
 * The AgentEngine port on real OpenClaw gateways, one OS process per running agent (reference §1, §2, §6):
 * versions come from EngineVersions, each agent's home from AgentHome, its process from GatewayProcess, its workspace
 * files and skill folders from Workspace (written directly on disk, where OpenClaw finds them), its whole workspace
 * tree (scanned and restored for snapshots) from WorkspaceTree. Starts are
 * CPU bound (about 14 CPU-seconds each), so at most `maxConcurrentStarts` run at once; the rest wait as `starting`.
 * Gateways are stopped when the layer's scope closes, and stop themselves if Cairn dies (parent-watch.mjs).
 *
 * What this adapter keeps in memory only: which agents exist, their tokens and their environments (secrets such as
 * model-provider keys, handed to the gateway process and to nothing on disk). After Cairn restarts it must provision
 * again (the home on disk is rewritten, the version in it kept) and set the environment again before starting an
 * agent.
 */
import {
  ChatUnavailable,
  EngineChat,
  AgentEngine,
  type AgentState,
  AgentNotProvisioned,
  type AppEndpoint,
  AppNotRunning,
  AppPortReserved,
  type ChannelSpec,
  type ChannelStatus,
  ChannelsUnavailable,
  UnknownPairingCode,
  DowngradeRefused,
  EngineCliError,
  EngineEnvironment,
  EngineUnavailable,
  EngineVersion,
  ExecFailed,
  type ExecRequest,
  type ExecResult,
  GatewayDidNotStart,
  GatewayRestartFailed,
  type Provisioning,
  UnknownDevice,
  type WhatsAppLink as WhatsAppLinkState,
  WorkingDirectoryOutside,
  WorkspacePath
} from "@cairn/agent-engine"
import { Duration, Effect, Layer, Redacted, Semaphore, Stream } from "effect"
import * as NodeFs from "node:fs"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import JSON5 from "json5"
import type { AgentLimits } from "./AgentCgroups.ts"
import * as AgentDisks from "./AgentDisks.ts"
import * as AgentHome from "./AgentHome.ts"
import type * as AgentNetwork from "./AgentNetwork.ts"
import * as ChannelPairing from "./ChannelPairing.ts"
import * as Channels from "./Channels.ts"
import * as Chat from "./Chat.ts"
import { sleep } from "./Command.ts"
import * as Console from "./Console.ts"
import * as Cron from "./Cron.ts"
import { parseDeviceList } from "./Devices.ts"
import * as EngineVersions from "./EngineVersions.ts"
import * as HomeFiles from "./HomeFiles.ts"
import * as HostEnvironment from "./HostEnvironment.ts"
import * as Logs from "./Logs.ts"
import { type Gateway, parentWatchPath, probeReady, type Reach, reapStale, signalGroup, spawnGateway, terminate } from "./GatewayProcess.ts"
import { connect as connectGateway, type GatewayClient, GatewayRpcError } from "./GatewayRpc.ts"
import * as RuntimeConfig from "./RuntimeConfig.ts"
import * as Sandbox from "./Sandbox.ts"
import * as WhatsAppLink from "./WhatsAppLink.ts"
import { parseSkillList } from "./Skills.ts"
import * as Workspace from "./Workspace.ts"
import * as WorkspaceTree from "./WorkspaceTree.ts"

export interface Options {
  /** The data root: agents live in `<dataDir>/agents/<agentId>`. */
  readonly dataDir: string
  /** Where engine versions are installed; `<dataDir>/engines` by default. Several Cairns may share one. */
  readonly enginesDir?: string
  /** The allowlist of versions offered; by default only the latest stable release on the registry. */
  readonly versions?: ReadonlyArray<string>
  /** How long a gateway may take to answer `/readyz` with 200; 90 seconds by default. */
  readonly startTimeout?: Duration.Input
  /** How long a gateway may take to exit after SIGTERM before it gets SIGKILL; 15 seconds by default. */
  readonly stopGrace?: Duration.Input
  /**
   * The same for a gateway running messaging channels, which waits out its whole shutdown budget (325 s) when a
   * channel's service cannot be reached (features §10): 5 seconds by default (an idle gateway stops in about 2 s).
   */
  readonly channelStopGrace?: Duration.Input
  /** How many gateways may be starting at once; 2 by default (reference §3: starts are CPU bound). */
  readonly maxConcurrentStarts?: number
  /**
   * How often a running gateway is asked for `/readyz`, and after how many unanswered asks in a row it is taken for
   * hung and killed (then reported crashed, so the supervisor brings it back): every 10 s, 3 asks by default. Any
   * answer counts, even a 503: a degraded gateway is alive.
   */
  readonly liveness?: { readonly interval: Duration.Input; readonly misses: number }
  /** The first agent's gateway port; agent n gets `basePort + 120·n` (OpenClaw derives ports up to base+110). */
  readonly basePort?: number
  /** The Node binary that runs OpenClaw (needs ≥ 24.16); the current one by default (`node` under Bun or Deno). */
  readonly nodePath?: string
  /** The npm CLI used to list and install versions. */
  readonly npmPath?: string
  /** How often an engine install under way logs how far it is; 5 seconds by default. */
  readonly installProgressEvery?: Duration.Input
  /**
   * Whether agents' processes (gateways, console commands, CLI runs) are isolated with bubblewrap (Sandbox.ts):
   * `auto` by default, which refuses to run agents when the sandbox cannot work; `required` refuses to build the
   * engine then; `off` runs them unsandboxed.
   */
  readonly sandbox?: Sandbox.Mode
  /** The resource limits of each sandbox; Sandbox.defaultLimits for what is not given. */
  readonly sandboxLimits?: Partial<Sandbox.Limits>
  /** Host services agents may reach from their own networks (AGENT_EGRESS_ALLOW; AgentNetwork.ts). */
  readonly egressAllow?: ReadonlyArray<AgentNetwork.EgressService>
  /**
   * What all of an agent's processes may use together (its cgroup: AGENT_MEMORY_MAX, AGENT_CPU_MAX, AGENT_PIDS_MAX);
   * AgentCgroups.defaultAgentLimits for what is not given.
   */
  readonly agentLimits?: Partial<AgentLimits>
  /**
   * The size of each agent's own filesystem, its home (AGENT_DISK_MAX; AgentDisks.ts). Not given or 0: agents have no
   * filesystem of their own, their homes share DATA_DIR's disk uncapped (the server's default is 10 GiB; an embedding
   * program opts in, as mounting is a change to the host).
   */
  readonly agentDiskBytes?: number
  /**
   * More host paths every sandbox shows read only (besides the system, the engines, the Node binary's directory):
   * tools agents should find, or a stand-in engine's sources in tests.
   */
  readonly sandboxReadOnly?: ReadonlyArray<string>
  /**
   * The domain each agent's own host is under (`<agentId>.<agentsDomain>`, AGENTS_DOMAIN; decision 0046), and the
   * ports Cairn is reached on there besides 80 and 443: their origins are the ones each gateway's Control UI allows.
   */
  readonly agentsDomain?: string
  readonly agentHostPorts?: ReadonlyArray<number>
  /**
   * Whether Cairn fills each engine version's Node compile cache, once, and gateways read it (CompileCache.ts,
   * decision 0054; OPENCLAW_COMPILE_CACHE): off by default here, on in the server. The fill starts one gateway of
   * the version outside any sandbox.
   */
  readonly compileCache?: boolean
}

interface Agent {
  readonly home: string
  /** Cairn's own folder for the agent, beside the homes and shown to no sandbox: its metadata and pid record. */
  readonly metaDir: string
  readonly slot: number
  version: string
  token: Redacted.Redacted<string>
  /** The variables of `setEnvironment`, already admitted; the next gateway gets them (under the engine's own). */
  environment: Readonly<Record<string, Redacted.Redacted<string>>>
  state: AgentState
  /** Why its gateway crashed, where known (set with `crashed`, cleared by the next start). */
  stopReason: "oom" | undefined
  gateway: Gateway | undefined
  /** Serialises start, stop, restart and destroy of this agent. */
  readonly lock: Semaphore.Semaphore
  /** Serialises the agent's workspace operations (and destroy), apart from `lock`: a slow start never holds them up. */
  readonly files: Semaphore.Semaphore
  /** The channels of the last `setChannels` (written into its config again when its version changes). */
  channels: ReadonlyArray<ChannelSpec>
  /** Whether the current gateway was launched with a channel enabled: it then gets the shorter stop grace. */
  launchedWithChannels: boolean
}

/**
 * The directories the sandbox must show for `nodePath` to run: its own and, for a link, its target's (a bare name
 * is looked up on PATH).
 */
const nodeDirs = (nodePath: string): Array<string> => {
  const found = Path.isAbsolute(nodePath)
    ? nodePath
    : (process.env["PATH"] ?? "").split(Path.delimiter).map((dir) => Path.join(dir, nodePath)).find((path) => NodeFs.existsSync(path))
  if (found === undefined) return []
  try {
    return [...new Set([Path.dirname(found), Path.dirname(NodeFs.realpathSync(found))])]
  } catch {
    return [Path.dirname(found)]
  }
}

/** The agents' own filesystems (AgentDisks.ts), or undefined, with a warning saying why their disk is not capped. */
const agentDisks = (sandbox: Sandbox.Sandbox, dataDir: string, sizeBytes: number) =>
  Effect.gen(function*() {
    if (sandbox.state._tag !== "Sandboxed" || sizeBytes === 0) return undefined
    const disks = yield* Effect.promise(() => AgentDisks.make(dataDir, sizeBytes))
    if (typeof disks !== "string") return disks
    yield* Effect.logWarning(
      `Agents' disk use is not capped (AGENT_DISK_MAX does not hold): ${disks}. One agent can fill the disk that ` +
        "holds DATA_DIR, and every other agent's and Cairn's writes then fail."
    )
    return undefined
  })

/** Builds the engine; every gateway it started is stopped (SIGTERM, then SIGKILL) when the scope closes. */
export const make = Effect.fnUntraced(function*(options: Options) {
  const dataDir = Path.resolve(options.dataDir)
  const agentsDir = Path.join(dataDir, "agents")
  const millis = (input: Duration.Input) => Duration.toMillis(Duration.fromInputUnsafe(input))
  const startTimeoutMs = millis(options.startTimeout ?? "90 seconds")
  const stopGraceMs = millis(options.stopGrace ?? "15 seconds")
  const channelStopGraceMs = Math.min(stopGraceMs, millis(options.channelStopGrace ?? "5 seconds"))
  /** A gateway with channels running gets the shorter grace: an unreachable channel would hold its exit for minutes. */
  const graceOf = (agent: Agent) => agent.launchedWithChannels || Channels.anyEnabled(agent.channels) ? channelStopGraceMs : stopGraceMs
  const basePort = options.basePort ?? 18789
  /** The browser origins of the agent's own host, which its gateway's config allows. */
  const originsOf = (agentId: string) => AgentHome.agentHostOrigins(agentId, options.agentsDomain, options.agentHostPorts)
  const livenessMs = millis(options.liveness?.interval ?? "10 seconds")
  const livenessMisses = options.liveness?.misses ?? 3
  const { nodePath, path, baseEnv } = HostEnvironment.make(options.nodePath)
  const versions = EngineVersions.make({
    enginesDir: Path.resolve(options.enginesDir ?? Path.join(dataDir, "engines")),
    npmPath: options.npmPath ?? "npm",
    npmEnv: EngineVersions.npmEnvironment(baseEnv, path),
    allowlist: options.versions,
    ...(options.installProgressEvery === undefined ? {} : { progressEvery: options.installProgressEvery }),
    ...(options.compileCache === true ? { compileCache: { nodePath, baseEnv } } : {})
  })
  // Probed once, here: an engine whose sandbox cannot run refuses every agent process (or, `required`, to be built).
  const sandbox = yield* Sandbox.make({
    mode: options.sandbox ?? "auto",
    dataDir,
    readOnly: [
      Path.resolve(options.enginesDir ?? Path.join(dataDir, "engines")),
      ...nodeDirs(nodePath),
      parentWatchPath,
      ...(options.sandboxReadOnly ?? [])
    ],
    ...(options.sandboxLimits === undefined ? {} : { limits: options.sandboxLimits }),
    ...(options.agentLimits === undefined ? {} : { agentLimits: options.agentLimits }),
    ...(options.egressAllow === undefined ? {} : { egressAllow: options.egressAllow }),
    nodePath
  })
  const disks = yield* agentDisks(sandbox, dataDir, options.agentDiskBytes ?? 0)
  /** Console commands and CLI runs under way, by agent home: a destroy ends them, and so does the engine's end. */
  const running = new Console.Running()

  const agents = new Map<string, Agent>()
  /**
   * Agents on their way up, for `provisioning`: since when (their provision, or else this start of their gateway)
   * and on which version. Set by `provision` and `start`, cleared when the start ends, a stop or a destroy.
   */
  const bringingUp = new Map<string, { readonly since: number; readonly version: string }>()
  const comingUp = (agentId: string, version: string) => {
    if (!bringingUp.has(agentId)) bringingUp.set(agentId, { since: Date.now(), version })
  }
  const agentsLock = yield* Semaphore.make(1)
  const startSlots = yield* Semaphore.make(Math.max(1, options.maxConcurrentStarts ?? 2))

  const portOf = (agent: Agent) => basePort + AgentHome.portSpacing * agent.slot
  // The agent's own variables go under the engine's, so that none of them can redirect its home, token or PATH. The
  // CLI commands run for an agent get them too: they act as the agent, and OpenClaw reads its credentials from them.
  const envOf = (agent: Agent): NodeJS.ProcessEnv => ({
    ...EngineEnvironment.reveal(agent.environment),
    ...AgentHome.processEnv(baseEnv, agent.home, agent.token)
  })

  const find = (agentId: string) =>
    Effect.suspend(() => {
      const agent = agents.get(agentId)
      return agent === undefined ? Effect.fail(new AgentNotProvisioned({ agentId })) : Effect.succeed(agent)
    })

  const halt = (agent: Agent) =>
    Effect.promise(async () => {
      const gateway = agent.gateway
      if (gateway !== undefined) await terminate(gateway, graceOf(agent))
      agent.gateway = undefined
      agent.state = "stopped"
    })

  const privateNetworks = sandbox.createNetwork !== undefined
  /**
   * Each agent's network (AgentNetwork.ts), made at its first start (or console command) and kept across its
   * gateway's restarts and crashes, so that what the agent runs stays reachable; let go when the agent is stopped
   * or destroyed, and when the engine ends.
   */
  const networks = new Map<Agent, Promise<AgentNetwork.Network>>()
  const networkOf = (agent: Agent): Promise<AgentNetwork.Network> | undefined => {
    const createNetwork = sandbox.createNetwork
    if (createNetwork === undefined) return undefined
    const replace = (): Promise<AgentNetwork.Network> => {
      const current = networks.get(agent)
      const made = (current ?? Promise.resolve(undefined)).catch(() => undefined).then((old) =>
        old !== undefined && !old.closed ? old : createNetwork()
      )
      networks.set(agent, made)
      made.catch(() => {
        if (networks.get(agent) === made) networks.delete(agent)
      })
      return made
    }
    const existing = networks.get(agent)
    // One that ended on its own (its connector or slirp4netns gone) is made again.
    return existing === undefined ? replace() : existing.then((network) => network.closed ? replace() : network, replace)
  }
  /** The agent's network where it has one already (never makes one). */
  const existingNetwork = async (agent: Agent) => {
    const network = await networks.get(agent)?.catch(() => undefined)
    return network === undefined || network.closed ? undefined : network
  }
  const releaseNetwork = async (agent: Agent) => {
    const network = networks.get(agent)
    networks.delete(agent)
    ;(await network?.catch(() => undefined))?.close()
  }
  /** Where Cairn reaches the gateway: its port on loopback, or connections into its agent's network. */
  const reachOf = (gateway: Gateway, port: number): Reach => {
    const network = gateway.network
    return network === undefined ? { port } : { connect: () => network.connect(port) }
  }
  /** One endpoint object per network and port (AppEndpoint: callers keep connections by it). */
  const appEndpoints = new WeakMap<AgentNetwork.Network, Map<number, AppEndpoint>>()
  const appEndpointIn = (network: AgentNetwork.Network, port: number): AppEndpoint => {
    let byPort = appEndpoints.get(network)
    if (byPort === undefined) appEndpoints.set(network, byPort = new Map())
    let endpoint = byPort.get(port)
    if (endpoint === undefined) byPort.set(port, endpoint = { connect: () => network.connect(port) })
    return endpoint
  }

  /** Kills a running gateway that stops answering HTTP at all: its exit then reads as a crash. */
  const watchLiveness = (gateway: Gateway, reach: Reach) => {
    let misses = 0
    let probing = false
    const timer = setInterval(() => {
      if (probing || gateway.stopping) return
      probing = true
      void probeReady(reach).then((answer) => {
        probing = false
        misses = answer === "silent" ? misses + 1 : 0
        if (misses < livenessMisses || gateway.stopping) return
        gateway.tail.push(`no answer on /readyz ${misses} times in a row: killed as hung\n`)
        signalGroup(gateway, "SIGKILL")
      })
    }, livenessMs)
    void gateway.exited.then(() => clearInterval(timer))
  }

  /** Spawns the gateway and polls `/readyz` until it answers 200, the process exits, or the deadline passes. */
  const launch = (agentId: string, agent: Agent) => {
    // This start's own gateway: a concurrent stop clears `agent.gateway`, but the failure below must still see it.
    let launched: Gateway | undefined
    return Effect.tryPromise({
      try: async (signal) => {
        const port = portOf(agent)
        // A gateway an earlier Cairn left behind (it was killed, and the gateway is still shutting down).
        await reapStale(agent.metaDir, stopGraceMs)
        // On the host's network only: in a network of its own, no one else can hold the gateway's port.
        if (!privateNetworks && (await probeReady({ port })) !== "silent") {
          throw new Error(`port ${port} is already in use by another process`)
        }
        agent.launchedWithChannels = Channels.anyEnabled(agent.channels)
        // The agent's OOM kills so far (console commands' included): a crash after more of them is the OOM killer's.
        const oomKillsBefore = sandbox.agentUsage(agent.home)?.oomKills ?? 0
        /**
         * Killed by the OOM killer: SIGKILL (or bubblewrap's 128 + 9 for the gateway it ran) while the agent's
         * cgroup counted a new OOM kill. Read from Cairn's own cgroup folder, never from the agent's home.
         */
        const killedByOom = (reason: string) =>
          (reason === "SIGKILL" || reason === "exit code 137") &&
          (sandbox.agentUsage(agent.home)?.oomKills ?? 0) > oomKillsBefore
        const network = await networkOf(agent)
        // A stop while its network was being made wins.
        if (signal.aborted || agent.state !== "starting") throw new Error("the start was interrupted")
        const gateway = spawnGateway({
          nodePath,
          entryFile: versions.entryFile(agent.version),
          home: agent.home,
          metaDir: agent.metaDir,
          port,
          // Last: the cache is Cairn's, read only in the sandbox; an agent's own NODE_COMPILE_CACHE would only be its own.
          env: { ...envOf(agent), ...versions.compileCacheEnv(agent.version) },
          stopGraceMs: graceOf(agent),
          sandbox,
          ...(network === undefined ? {} : { network })
        })
        launched = gateway
        agent.gateway = gateway
        agent.stopReason = undefined
        let exitReason: string | undefined
        void gateway.exited.then((reason) => {
          exitReason = reason
          if (agent.gateway === gateway && !gateway.stopping) {
            agent.state = "crashed"
            if (killedByOom(reason)) agent.stopReason = "oom"
          }
        })
        const deadline = Date.now() + startTimeoutMs
        const reach = reachOf(gateway, port)
        while (true) {
          if (exitReason !== undefined) throw new Error(`the gateway exited (${exitReason}) before it was ready`)
          if (signal.aborted || gateway.stopping) throw new Error("the start was interrupted")
          if ((await probeReady(reach)) === "ready" && exitReason === undefined) break
          if (Date.now() > deadline) throw new Error(`the gateway was not ready within ${startTimeoutMs} ms`)
          await sleep(250)
        }
        agent.state = "running"
        watchLiveness(gateway, reach)
      },
      catch: (cause) => cause
    }).pipe(
      Effect.catch((cause) =>
        Effect.gen(function*() {
          // A gateway that did not become ready is killed, and the agent reported crashed (as the simulation does).
          const gateway = launched
          const logTail = [gateway?.tail.toString() ?? "", cause instanceof Error ? cause.message : String(cause)]
            .filter((part) => part.length > 0)
            .join("\n")
          // Stopped meanwhile: by its gateway's stop, or before it had one (halt set the state).
          const stopped = gateway?.stopping === true || (gateway === undefined && agent.state === "stopped")
          if (gateway !== undefined) yield* Effect.promise(() => terminate(gateway, 2_000))
          if (agent.gateway === gateway) agent.gateway = undefined
          agent.state = stopped ? "stopped" : "crashed"
          return yield* new GatewayDidNotStart({ agentId, logTail })
        })
      ),
      // A caller that gives up on a start leaves no half-started gateway behind.
      Effect.onInterrupt(() => halt(agent))
    )
  }

  const start = (agentId: string, agent: Agent) =>
    Effect.suspend(() => {
      if (agent.state === "running" && agent.gateway !== undefined) return Effect.void
      return Effect.gen(function*() {
        // A crashed gateway may have left its workers behind.
        if (agent.gateway !== undefined) yield* halt(agent)
        agent.state = "starting"
        comingUp(agentId, agent.version)
        yield* versions.ensureInstalled(agent.version).pipe(
          Effect.catch((error) => Effect.fail(new GatewayDidNotStart({ agentId, logTail: String(error.cause) })))
        )
        yield* Effect.suspend(() =>
          // A stop while this start waited for its turn wins.
          agent.state === "starting"
            ? launch(agentId, agent)
            : Effect.fail(new GatewayDidNotStart({ agentId, logTail: "the start was interrupted" }))
        ).pipe(Semaphore.withPermit(startSlots))
      }).pipe(
        Effect.tapError(() =>
          Effect.sync(() => {
            if (agent.state === "starting" && agent.gateway === undefined) agent.state = "crashed"
          })
        ),
        Effect.ensuring(Effect.sync(() => void bringingUp.delete(agentId)))
      )
    })

  /**
   * Runs a workspace operation on the agent's files, one at a time per agent and only while the agent exists (a
   * destroy in between must not see its workspace written again). Filesystem failures are EngineUnavailable. Not
   * interruptible: the promise would run on without the lock, and it cleans up its temporary files itself.
   */
  const onWorkspace = <A>(agentId: string, operation: (workspace: string, home: string) => Promise<A>) =>
    Effect.flatMap(find(agentId), (agent) =>
      Effect.suspend((): Effect.Effect<A, EngineUnavailable | AgentNotProvisioned> =>
        agents.get(agentId) === agent
          ? Effect.tryPromise({
            try: () => operation(AgentHome.workspaceDir(agent.home), agent.home),
            catch: (cause) => new EngineUnavailable({ cause })
          })
          : Effect.fail(new AgentNotProvisioned({ agentId }))
      ).pipe(Semaphore.withPermit(agent.files), Effect.uninterruptible))

  /** Runs the agent's OpenClaw CLI as the agent (its home, environment and engine version); fails as EngineCliError. */
  const cli = (agentId: string, agent: Agent, args: ReadonlyArray<string>) =>
    Effect.tryPromise({
      try: () => runAs(agent, [nodePath, versions.entryFile(agent.version), ...args], { timeoutMs: 60_000, maxOutputBytes: 32 * 1024 * 1024 }),
      catch: (cause) => new EngineCliError({ agentId, detail: String(cause) })
    }).pipe(Effect.flatMap((result) =>
      result.code === 0
        ? Effect.succeed(result.stdout)
        : Effect.fail(
          new EngineCliError({
            agentId,
            detail: (result.stdout.trim() || result.stderr.trim() || `exit code ${result.code}`).slice(0, 2_000)
          })
        )
    ))

  /**
   * Runs a process as the agent, in its sandbox: its home, its environment (secrets included), `cwd` (the home by
   * default) and the caps of `limits`. Rejects when it cannot be started (the sandbox unavailable included).
   */
  const runAs = async (
    agent: Agent,
    argv: readonly [string, ...Array<string>],
    limits: Console.RunOptions,
    cwd = agent.home,
    // By default the agent's network where it has one (a CLI run talks to its gateway there); else none.
    network?: Sandbox.NetworkChoice | undefined
  ) => {
    const choice: Sandbox.NetworkChoice = network ?? await existingNetwork(agent).then((joined) => joined === undefined ? "none" : { join: joined })
    const launch = sandbox.launch({ home: agent.home, cwd, argv, env: envOf(agent), dieWithParent: true, gracefulTerm: false, network: choice })
    const result = await Console.run(launch, limits, { registry: running, home: agent.home })
    return { ...result, code: result.exitCode }
  }

  /**
   * A console command: `sh -c` in the workspace (or `cwd` inside it) in the agent's sandbox, whether or not its
   * gateway runs. No lock: a slow start or another command never holds it up; a destroy kills it.
   */
  const consoleExec = (agentId: string, agent: Agent, request: ExecRequest) =>
    Effect.tryPromise({
      try: async (signal): Promise<ExecResult | WorkingDirectoryOutside> => {
        const workspace = AgentHome.workspaceDir(agent.home)
        // OpenClaw makes the workspace at its first start; a command may come before. Made through HomeFiles: a
        // `.openclaw` the agent replaced with a symlink is not followed. The command then runs in the home (when no
        // other folder was asked for), so that the agent can still repair it.
        const cwd = await HomeFiles.withDir(agent.home, ".openclaw/workspace", true, (folder) =>
          Console.resolveWorkingDirectory(workspace, request.cwd, folder!.path)
        ).catch((error: unknown) => {
          if (!(error instanceof HomeFiles.HomeTampered)) throw error
          return request.cwd === undefined ? agent.home : undefined
        })
        if (cwd === undefined) return new WorkingDirectoryOutside({ agentId, cwd: request.cwd ?? "" })
        // Checked again right before the spawn: a destroy that got in between has ended this agent's commands.
        if (agents.get(agentId) !== agent) throw new Error("the agent was destroyed")
        // In the agent's network (its gateway's, its apps'; made now if it has none yet: a way out).
        const network = await networkOf(agent)
        return await runAs(agent, ["sh", "-c", request.command], { timeoutMs: request.timeoutMs, maxOutputBytes: request.maxOutputBytes, signal }, cwd, network === undefined ? undefined : { join: network })
      },
      catch: (cause) => new ExecFailed({ agentId, detail: cause instanceof Error ? cause.message : String(cause) })
    }).pipe(Effect.flatMap((result) => "exitCode" in result ? Effect.succeed(result) : Effect.fail(result)))

  /** One kept-open RPC connection per running gateway (see `rpc`), with the gateway and token it was opened for. */
  interface Connection {
    readonly gateway: Gateway
    readonly token: string
    readonly client: Promise<GatewayClient>
  }
  const connections = new Map<Agent, Connection>()
  const dropConnection = (agent: Agent, connection: Connection) => {
    if (connections.get(agent) !== connection) return
    connections.delete(agent)
    void connection.client.then((client) => client.close(), () => {})
  }
  /** The agent's open connection, opened now if there is none or the one there is stale (closed, other gateway, old token). */
  const connectionTo = async (agentId: string, agent: Agent): Promise<GatewayClient> => {
    while (true) {
      const gateway = agent.gateway
      if (agent.state !== "running" || gateway === undefined) {
        throw new GatewayRpcError("UNAVAILABLE", `the gateway of agent ${agentId} is not running (${agent.state})`)
      }
      const token = Redacted.value(agent.token)
      const current = connections.get(agent)
      if (current !== undefined && current.gateway === gateway && current.token === token) {
        const client = await current.client.catch(() => undefined)
        if (client !== undefined && !client.closed) return client
        dropConnection(agent, current)
        continue
      }
      if (current !== undefined) dropConnection(agent, current)
      const reach = reachOf(gateway, portOf(agent))
      const connection: Connection = {
        gateway,
        token,
        client: connectGateway({
          ...("connect" in reach ? { url: "ws://localhost", connect: reach.connect } : { url: `ws://127.0.0.1:${reach.port}` }),
          token,
          timeoutMs: 15_000
        })
      }
      connections.set(agent, connection)
      // Closed with its gateway (stopped, crashed, destroyed); a failed connect is not kept: the next call tries again.
      void gateway.exited.then(() => dropConnection(agent, connection))
      connection.client.catch(() => dropConnection(agent, connection))
      return connection.client
    }
  }

  /**
   * Calls one method of the agent's gateway over WebSocket RPC (features §13): config here, cron for scheduled tasks.
   * The connection is opened lazily on the first call to a running gateway and kept open (a call costs a few ms, a
   * CLI process 1.3–6 s); it closes when the gateway stops, crashes or is destroyed, and a call after a drop, a
   * restart or a token rotation opens a new one. Fails at once with `UNAVAILABLE` when the gateway is not running;
   * the engine's own errors keep their code (`INVALID_REQUEST`, and `UNAVAILABLE` with `retryAfterMs` from its rate
   * limit on control-plane writes: 30 per method per 60 s per client address, which all of Cairn's loopback
   * connections to one gateway share); transport failures are `CLOSED` or `TIMEOUT`.
   */
  const rpc = (agentId: string, agent: Agent, method: string, params?: unknown, timeoutMs?: number): Effect.Effect<unknown, GatewayRpcError> =>
    Effect.tryPromise({
      try: async () => (await connectionTo(agentId, agent)).request(method, params, timeoutMs === undefined ? undefined : { timeoutMs }),
      catch: (cause) => cause instanceof GatewayRpcError ? cause : new GatewayRpcError("UNAVAILABLE", String(cause))
    })

  /** Config writes of one agent, one at a time (a write reads, checks and replaces the whole config). */
  const configLocks = new WeakMap<Agent, Semaphore.Semaphore>()
  const configLock = (agent: Agent) => {
    let lock = configLocks.get(agent)
    if (lock === undefined) configLocks.set(agent, lock = Semaphore.makeUnsafe(1))
    return lock
  }
  /** What RuntimeConfig needs of an agent: its file, its gateway's RPC, and its version's validator. */
  const configTarget = (agentId: string, agent: Agent): RuntimeConfig.ConfigTarget => ({
    agentId,
    home: agent.home,
    port: portOf(agent),
    origins: originsOf(agentId),
    isRunning: () => agent.state === "running" && agent.gateway !== undefined,
    rpc: (method, params) => rpc(agentId, agent, method, params),
    // As the agent, in its sandbox (the candidate lies in its home); `env` points the CLI at the candidate.
    runValidator: (configPath) =>
      Effect.tryPromise({
        try: () =>
          runAs(agent, ["env", `OPENCLAW_CONFIG_PATH=${configPath}`, nodePath, versions.entryFile(agent.version), "config", "validate", "--json"], {
            timeoutMs: 60_000,
            maxOutputBytes: 4 * 1024 * 1024
          }),
        catch: (cause) => String(cause)
      })
  })

  /**
   * Writes the agent's channels into its config file (Channels.ts), under the config lock; a file already saying so
   * is not touched. The plugins of the agent's version are installed first when a channel needs one. A running
   * gateway may notice the file and reload, but only a restart hands it the tokens of its environment.
   */
  const writeChannels = (agentId: string, agent: Agent, specs: ReadonlyArray<ChannelSpec>) =>
    Effect.gen(function*() {
      const version = agent.version
      if (specs.some((spec) => Channels.externalPlugins.includes(spec.channel))) {
        yield* versions.ensurePlugins(version).pipe(
          Effect.mapError((error) => new ChannelsUnavailable({ agentId, detail: `the channel plugins of OpenClaw ${version} are not installed: ${String(error.cause)}` }))
        )
      }
      yield* Effect.tryPromise({
        try: async () => {
          const text = await HomeFiles.readText(agent.home, AgentHome.configRelative)
          if (text === undefined) throw new Error("the config is missing")
          const parsed: unknown = JSON5.parse(text)
          if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new Error("the config is not an object")
          const next = Channels.applyChannels(parsed as Record<string, unknown>, specs, (channel) => versions.pluginPath(version, channel))
          const nextText = JSON.stringify(next, null, 2) + "\n"
          if (nextText !== text) await HomeFiles.writeText(agent.home, AgentHome.configRelative, nextText)
        },
        catch: (cause) => new ChannelsUnavailable({ agentId, detail: `the config could not be written: ${cause instanceof Error ? cause.message : String(cause)}` })
      })
      agent.channels = specs
    }).pipe(Semaphore.withPermit(configLock(agent)))

  // Children must not outlive the engine: stop them all with the scope, and kill them if Node exits first.
  const killAllNow = () => {
    for (const agent of agents.values()) if (agent.gateway !== undefined) signalGroup(agent.gateway, "SIGKILL", true)
  }
  process.on("exit", killAllNow)
  yield* Effect.addFinalizer(() =>
    Effect.promise(async () => {
      await Promise.all(
        [...agents.values()].map(async (agent) => {
          if (agent.gateway !== undefined) await terminate(agent.gateway, Math.min(graceOf(agent), 5_000))
          agent.gateway = undefined
          agent.state = "stopped"
        })
      )
      await running.killAll()
      for (const agent of agents.values()) await releaseNetwork(agent)
      // Their processes are gone: the next run mounts their filesystems again.
      if (disks !== undefined) await Promise.all([...agents.values()].map((agent) => disks.detach(agent.home).catch(() => {})))
      process.off("exit", killAllNow)
    })
  )

  /** A device RPC on the agent's running gateway; the gateway's "unknown requestId" / "unknown deviceId" is UnknownDevice. */
  const deviceCall = (agentId: string, method: string, params: Record<string, string>, id: string) =>
    Effect.gen(function*() {
      const agent = yield* find(agentId)
      if (agent.state !== "running") {
        return yield* new EngineCliError({ agentId, detail: `the gateway is not running (${agent.state})` })
      }
      yield* rpc(agentId, agent, method, params).pipe(
        Effect.mapError((error) =>
          /\bunknown (?:requestId|deviceId)\b/.test(error.message)
            ? new UnknownDevice({ agentId, id })
            : new EngineCliError({ agentId, detail: `${method}: ${error.message}` })
        )
      )
    })

  /**
   * The channel's pending pairing requests with their codes (ChannelPairing.ts: the CLI shows them, the RPC does
   * not), of a running gateway. `channel` is one of Cairn's channel names, so nothing but a name reaches the CLI.
   */
  const storedPairing = (agentId: string, agent: Agent, channel: string) =>
    Effect.gen(function*() {
      if (agent.state !== "running" || agent.gateway === undefined) {
        return yield* new ChannelsUnavailable({ agentId, detail: `the gateway is not running (${agent.state})` })
      }
      const stdout = yield* cli(agentId, agent, ["pairing", "list", channel, "--json"]).pipe(
        Effect.mapError((error) => new ChannelsUnavailable({ agentId, detail: `pairing list: ${error.detail}` }))
      )
      return yield* ChannelPairing.parseCliList(stdout).pipe(Effect.mapError((detail) => new ChannelsUnavailable({ agentId, detail })))
    })

  const state = sandbox.state
  const agentLimits = state._tag === "Sandboxed" && (state.enforced.length > 0 || disks !== undefined)
    ? {
      memoryBytes: state.enforced.includes("memory") ? state.agentLimits.memoryBytes : null,
      cpus: state.enforced.includes("cpu") ? state.agentLimits.cpus : null,
      pids: state.enforced.includes("pids") ? state.agentLimits.pids : null,
      diskBytes: disks?.sizeBytes ?? null
    }
    : undefined
  /** A call of the WhatsApp plugin's login, given `waitMs` to answer beyond the RPC's own allowance. */
  const whatsAppCall = (agentId: string, agent: Agent, method: string, params: Record<string, unknown>, waitMs: number) =>
    rpc(agentId, agent, method, params, waitMs + 10_000).pipe(
      Effect.mapError((error) => new ChannelsUnavailable({ agentId, detail: `${method}: ${error.message}` })),
      Effect.flatMap((answer) => Effect.mapError(WhatsAppLink.parse(method, answer), (detail) => new ChannelsUnavailable({ agentId, detail })))
    )

  /** The open RPC connection to the agent's running gateway, for a chat; ChatUnavailable while it is not running. */
  const chatConnection = (agentId: string) =>
    Effect.gen(function*() {
      const agent = yield* find(agentId)
      if (agent.state !== "running" || agent.gateway === undefined) {
        return yield* new ChatUnavailable({ agentId, detail: `the gateway is not running (${agent.state})` })
      }
      const client = yield* Effect.tryPromise({
        try: () => connectionTo(agentId, agent),
        catch: (cause) => new ChatUnavailable({ agentId, detail: cause instanceof Error ? cause.message : String(cause) })
      })
      return { agent, client }
    })

  /** The agent's configured primary model (`agents.defaults.model`), when its config names one. */
  const defaultModel = (agentId: string, agent: Agent) =>
    RuntimeConfig.read(configTarget(agentId, agent)).pipe(
      Effect.map(({ config }) => EngineChat.configuredModel(config)),
      Effect.orElseSucceed(() => undefined)
    )

  return AgentEngine.of({
    ...(agentLimits === undefined ? {} : { agentLimits }),
    memoryUsage: (agentId) =>
      Effect.sync(() => {
        const agent = agents.get(agentId)
        return agent === undefined ? undefined : sandbox.agentUsage(agent.home)?.memoryBytes
      }),
    diskUsage: (agentId) =>
      Effect.sync(() => {
        const agent = agents.get(agentId)
        return agent === undefined ? undefined : disks?.usedBytes(agent.home)
      }),
    name: "openclaw",
    listVersions: versions.list,
    isInstalled: versions.isInstalled,

    provision: Effect.fnUntraced(function*(agentId, spec) {
      if (agents.has(agentId)) return
      if (!AgentHome.isSafeAgentId(agentId)) {
        return yield* Effect.die(new Error(`OpenClawAgentEngine: agent id ${JSON.stringify(agentId)} is not a plain name`))
      }
      yield* versions.checkOffered(spec.version)
      comingUp(agentId, spec.version)
      yield* versions.ensureInstalled(spec.version).pipe(Effect.onError(() => Effect.sync(() => void bringingUp.delete(agentId))))
      yield* Effect.gen(function*() {
        if (agents.has(agentId)) return
        const home = Path.join(agentsDir, agentId)
        const metaDir = AgentHome.metaDirOf(home)
        const previous = yield* AgentHome.readMeta(home, metaDir)
        const taken = new Set([...agents.values()].map((agent) => agent.slot))
        let slot = previous?.slot ?? 0
        if (previous === undefined || taken.has(slot)) {
          slot = 0
          while (taken.has(slot)) slot++
        }
        // A home left by an earlier run keeps its version: state migrations only go forward.
        const version = previous !== undefined && EngineVersion.isOlder(spec.version, previous.version)
          ? previous.version
          : spec.version
        // Its own filesystem first: nothing may be written beneath where it is mounted.
        if (disks !== undefined) {
          yield* Effect.tryPromise({ try: () => disks.attach(home), catch: (cause) => new EngineUnavailable({ cause }) })
        }
        yield* AgentHome.write(home, metaDir, { version, slot }, basePort + AgentHome.portSpacing * slot, originsOf(agentId))
        agents.set(agentId, {
          home,
          metaDir,
          slot,
          version,
          token: spec.gatewayToken,
          environment: {},
          state: "stopped",
          stopReason: undefined,
          gateway: undefined,
          lock: yield* Semaphore.make(1),
          files: yield* Semaphore.make(1),
          channels: [],
          launchedWithChannels: false
        })
      }).pipe(Semaphore.withPermit(agentsLock))
    }),

    start: (agentId) => Effect.flatMap(find(agentId), (agent) => start(agentId, agent).pipe(Semaphore.withPermit(agent.lock))),

    // A gateway still starting (or waiting to) is stopped at once, and its start fails; otherwise stop waits its turn.
    stop: (agentId) =>
      Effect.flatMap(find(agentId), (agent) =>
        (agent.state === "starting" ? halt(agent) : halt(agent).pipe(Semaphore.withPermit(agent.lock))).pipe(
          // Stopped for good, not restarting: its network goes too (what ran in it with the gateway is gone).
          Effect.andThen(Effect.promise(() => releaseNetwork(agent)))
        )),

    restart: (agentId, restartOptions = {}) =>
      Effect.flatMap(find(agentId), (agent) =>
        Effect.gen(function*() {
          const target = restartOptions.version ?? agent.version
          if (restartOptions.version !== undefined) {
            yield* versions.checkOffered(target).pipe(
              Effect.catchTag("EngineUnavailable", (cause) => Effect.fail(new GatewayRestartFailed({ agentId, cause })))
            )
            if (EngineVersion.isOlder(target, agent.version)) {
              return yield* new DowngradeRefused({ from: agent.version, to: target })
            }
          }
          // Install before stopping, so a slow or failed install costs no downtime.
          yield* versions.ensureInstalled(target).pipe(Effect.catch((cause) => Effect.fail(new GatewayRestartFailed({ agentId, cause }))))
          yield* halt(agent)
          if (target !== agent.version) {
            agent.version = target
            yield* AgentHome.persistMeta(agent.metaDir, { version: agent.version, slot: agent.slot })
            // The channel plugins the config loads are the new version's.
            if (agent.channels.length > 0) {
              yield* writeChannels(agentId, agent, agent.channels).pipe(
                Effect.catch((error) => Effect.logWarning(`Agent ${agentId}: channels not moved to OpenClaw ${target}`, error.detail))
              )
            }
          }
          yield* start(agentId, agent).pipe(Effect.catch((cause) => Effect.fail(new GatewayRestartFailed({ agentId, cause }))))
        }).pipe(Semaphore.withPermit(agent.lock))),

    status: (agentId) =>
      Effect.map(find(agentId), (agent) => ({
        state: agent.state,
        version: agent.version,
        ...(agent.state === "crashed" && agent.stopReason !== undefined ? { reason: agent.stopReason } : {})
      })),

    // Installing while the version's install runs (its engine, then its channel plugins), then starting the gateway.
    provisioning: (agentId) =>
      Effect.sync((): Provisioning | undefined => {
        const up = bringingUp.get(agentId)
        if (up === undefined) return undefined
        const agent = agents.get(agentId)
        if (agent !== undefined && agent.state !== "starting") return undefined
        const version = agent?.version ?? up.version
        const elapsedMs = Date.now() - up.since
        const install = versions.installing(version)
        if (install !== undefined) {
          return { phase: "installing_engine", version, elapsedMs, ...(install.installedBytes === undefined ? {} : { installedBytes: install.installedBytes }) }
        }
        return { phase: agent === undefined ? "installing_engine" : "starting_gateway", version, elapsedMs }
      }),

    listDevices: Effect.fnUntraced(function*(agentId) {
      const agent = yield* find(agentId)
      if (agent.state !== "running") {
        return yield* new EngineCliError({ agentId, detail: `the gateway is not running (${agent.state})` })
      }
      // `devices list --json` prints this RPC's answer as it is (1.3–1.8 s a call); on the open connection, a few ms.
      const answer = yield* rpc(agentId, agent, "device.pair.list", {}).pipe(
        Effect.mapError((error) => new EngineCliError({ agentId, detail: `device.pair.list: ${error.message}` }))
      )
      return yield* parseDeviceList(JSON.stringify(answer)).pipe(Effect.mapError((detail) => new EngineCliError({ agentId, detail })))
    }),

    answerPairing: (agentId, requestId, answer) => deviceCall(agentId, `device.pair.${answer}`, { requestId }, requestId),
    removeDevice: (agentId, deviceId) => deviceCall(agentId, "device.pair.remove", { deviceId }, deviceId),

    // This adapter configures no build or start scripts for agents, so there is nothing to relaunch: success.
    relaunchScripts: (agentId) => Effect.asVoid(find(agentId)),

    // The token lives only in the gateway's environment, so a running gateway must restart to take the new one. The
    // port admits no failure here: a gateway that does not come back is left `crashed` for status to report.
    rotateGatewayToken: (agentId, token) =>
      Effect.flatMap(find(agentId), (agent) =>
        Effect.gen(function*() {
          agent.token = token
          if (agent.gateway === undefined || agent.state === "crashed") return
          yield* halt(agent)
          yield* start(agentId, agent).pipe(
            Effect.catch((error) => Effect.logWarning("Gateway did not come back after a token rotation", error))
          )
        }).pipe(Semaphore.withPermit(agent.lock))),

    // Nothing to write and nothing to restart: the next start, restart or token rotation hands it to the gateway.
    setEnvironment: Effect.fnUntraced(function*(agentId, environment) {
      const agent = yield* find(agentId)
      const { refused, variables } = EngineEnvironment.admit(environment)
      agent.environment = variables
      if (refused.length > 0) yield* Effect.logWarning(EngineEnvironment.refusedWarning(agentId, refused))
    }),

    // Filled in by issue 13's work.
    readWorkspaceFileWithin: (agentId, path, maxBytes) =>
      Effect.flatMap(WorkspacePath.requireRelativePath(path), (checked) =>
        onWorkspace(agentId, (workspace, home) => Workspace.readFileWithin({ home, workspace }, checked, maxBytes))),
    exec: (agentId, request) => Effect.flatMap(find(agentId), (agent) => consoleExec(agentId, agent, request)),
    readConfig: (agentId) => Effect.flatMap(find(agentId), (agent) => RuntimeConfig.read(configTarget(agentId, agent))),
    writeConfig: (agentId, write) =>
      Effect.flatMap(find(agentId), (agent) =>
        RuntimeConfig.write(configTarget(agentId, agent), write).pipe(Semaphore.withPermit(configLock(agent)))),
    validateConfig: (agentId, config) =>
      Effect.flatMap(find(agentId), (agent) => RuntimeConfig.validate(configTarget(agentId, agent), config)),
    // Scheduled tasks are OpenClaw's cron jobs, over the kept-open RPC connection (Cron.ts); the gateway must run.
    listTasks: (agentId, options) =>
      Effect.flatMap(find(agentId), (agent) =>
        Cron.make(agentId, (method, params) => rpc(agentId, agent, method, params)).list(options.includeDisabled)),
    getTask: (agentId, taskId) =>
      Effect.flatMap(find(agentId), (agent) =>
        Cron.make(agentId, (method, params) => rpc(agentId, agent, method, params)).get(taskId)),
    addTask: (agentId, spec) =>
      Effect.flatMap(find(agentId), (agent) =>
        Cron.make(agentId, (method, params) => rpc(agentId, agent, method, params)).add(spec)),
    updateTask: (agentId, taskId, patch) =>
      Effect.flatMap(find(agentId), (agent) =>
        Cron.make(agentId, (method, params) => rpc(agentId, agent, method, params)).update(taskId, patch)),
    removeTask: (agentId, taskId) =>
      Effect.flatMap(find(agentId), (agent) =>
        Cron.make(agentId, (method, params) => rpc(agentId, agent, method, params)).remove(taskId)),
    runTask: (agentId, taskId) =>
      Effect.flatMap(find(agentId), (agent) =>
        Cron.make(agentId, (method, params) => rpc(agentId, agent, method, params)).run(taskId)),
    taskRuns: (agentId, taskId, limit) =>
      Effect.flatMap(find(agentId), (agent) =>
        Cron.make(agentId, (method, params) => rpc(agentId, agent, method, params)).runs(taskId, limit)),

    // In a network of its own (AgentNetwork.ts), an app is reached by connections into it, while the agent has it
    // (from its first start until it is stopped); sharing the host's network, it is on loopback at its own port. The gateway's ports (its port and the ones
    // OpenClaw derives from it, up to +110) are refused: the app would be the gateway, or keep it from starting;
    // sharing the host's network, every agent's.
    appEndpoint: (agentId, port) =>
      Effect.flatMap(find(agentId), (found): Effect.Effect<AppEndpoint, AppPortReserved | AppNotRunning> => {
        const reserved = (privateNetworks ? [found] : [...agents.values()])
          .some((agent) => port >= portOf(agent) && port <= portOf(agent) + 110)
        if (reserved) return Effect.fail(new AppPortReserved({ agentId, port }))
        if (!privateNetworks) return Effect.succeed({ host: "127.0.0.1", port })
        return Effect.tryPromise({
          try: async () => {
            const network = await existingNetwork(found)
            if (network === undefined) throw new Error("not running")
            return appEndpointIn(network, port)
          },
          catch: () => new AppNotRunning({ agentId, port })
        })
      }),

    // The gateway's own port, reached as an app's is (the same endpoint object per network and port), while it runs.
    gatewayEndpoint: (agentId) =>
      Effect.flatMap(find(agentId), (agent): Effect.Effect<AppEndpoint, AppNotRunning> => {
        const gateway = agent.gateway
        const port = portOf(agent)
        if (agent.state !== "running" || gateway === undefined) return Effect.fail(new AppNotRunning({ agentId, port }))
        const network = gateway.network
        return Effect.succeed(network === undefined ? { host: "127.0.0.1", port } : appEndpointIn(network, port))
      }),

    setChannels: (agentId, specs) => Effect.flatMap(find(agentId), (agent) => writeChannels(agentId, agent, specs)),

    // From the running gateway (`channels.status`, a few ms on the open connection); stopped, from what is configured.
    channelStatus: (agentId) =>
      Effect.flatMap(find(agentId), (agent) =>
        agent.state === "running" && agent.gateway !== undefined
          ? rpc(agentId, agent, "channels.status", { probe: false }).pipe(
            Effect.map(Channels.parseStatus),
            Effect.mapError((error) => new ChannelsUnavailable({ agentId, detail: `channels.status: ${error.message}` }))
          )
          : Effect.succeed(agent.channels.map((spec): ChannelStatus => ({
            channel: spec.channel,
            configured: true,
            running: false,
            ...(spec.channel === "whatsapp" ? { linked: false } : {})
          })))),

    listChannelPairing: (agentId, channel) =>
      Effect.flatMap(find(agentId), (agent) =>
        Effect.map(storedPairing(agentId, agent, channel), (requests) => requests.map(({ accountId: _, ...request }) => request))),

    // The code names the request in the CLI's list; the gateway approves it by its own id (ChannelPairing.ts).
    approveChannelPairing: (agentId, channel, code) =>
      Effect.gen(function*() {
        const agent = yield* find(agentId)
        const stored = (yield* storedPairing(agentId, agent, channel)).find((request) => request.code === code.toUpperCase())
        if (stored === undefined) return yield* new UnknownPairingCode({ agentId, channel })
        const unavailable = (detail: string) => new ChannelsUnavailable({ agentId, detail })
        const listed = yield* rpc(agentId, agent, "channels.pairing.list", { channel }).pipe(
          Effect.mapError((error) => unavailable(`channels.pairing.list: ${error.message}`)),
          Effect.flatMap((answer) => Effect.mapError(ChannelPairing.gatewayRequestId(answer, stored), unavailable))
        )
        if (listed === undefined) {
          return yield* unavailable(`the gateway does not list the ${channel} pairing request of ${stored.senderId} (is the channel in pairing mode?)`)
        }
        yield* rpc(agentId, agent, "channels.pairing.approve", { channel, accountId: stored.accountId, requestId: listed }).pipe(
          Effect.mapError((error) =>
            ChannelPairing.isGone(error.message)
              ? new UnknownPairingCode({ agentId, channel })
              : unavailable(`channels.pairing.approve: ${error.message}`)
          )
        )
        return { senderId: stored.senderId }
      }),

    // OpenClaw's QR login, its WhatsApp plugin's methods in the running gateway (WhatsAppLink.ts).
    startWhatsAppLink: (agentId, { force }) =>
      Effect.flatMap(find(agentId), (agent) =>
        whatsAppCall(agentId, agent, "web.login.start", { channel: "whatsapp", force, timeoutMs: WhatsAppLink.startTimeoutMs }, WhatsAppLink.startTimeoutMs)),
    // No login under way: linked or not, as the channel says (a link outlives its login, in the agent's home).
    whatsAppLink: (agentId) =>
      Effect.flatMap(find(agentId), (agent) =>
        whatsAppCall(agentId, agent, "web.login.wait", {
          channel: "whatsapp",
          timeoutMs: WhatsAppLink.lookTimeoutMs,
          currentQrDataUrl: WhatsAppLink.noCode
        }, WhatsAppLink.lookTimeoutMs).pipe(
          Effect.flatMap((link) =>
            link.status !== "not_started" ? Effect.succeed(link) : rpc(agentId, agent, "channels.status", { probe: false }).pipe(
              Effect.map((answer): WhatsAppLinkState =>
                Channels.parseStatus(answer).find((status) => status.channel === "whatsapp")?.linked === true
                  ? { status: "linked", message: "WhatsApp is linked." }
                  : link
              ),
              Effect.mapError((error) => new ChannelsUnavailable({ agentId, detail: `channels.status: ${error.message}` }))
            )
          )
        )),

    chat: (agentId, request) =>
      Stream.unwrap(Effect.map(chatConnection(agentId), ({ agent, client }) =>
        Chat.turn(client, agentId, request, () => Effect.runPromise(defaultModel(agentId, agent))))),
    chatSessions: (agentId) => Effect.flatMap(chatConnection(agentId), ({ client }) => Chat.sessions(client, agentId)),
    chatHistory: (agentId, sessionKey, limit) =>
      Effect.flatMap(chatConnection(agentId), ({ client }) => Chat.history(client, agentId, sessionKey, limit)),
    listModels: (agentId) =>
      Effect.flatMap(chatConnection(agentId), ({ agent, client }) =>
        Effect.flatMap(defaultModel(agentId, agent), (model) => Chat.models(client, agentId, model))),
    destroy: (agentId) =>
      Effect.suspend(() => {
        bringingUp.delete(agentId)
        const agent = agents.get(agentId)
        if (agent === undefined) {
          // A home left by an earlier run of Cairn is removed too, with any gateway it left running.
          if (!AgentHome.isSafeAgentId(agentId)) return Effect.void
          const home = Path.join(agentsDir, agentId)
          return Effect.promise(async () => {
            await reapStale(AgentHome.metaDirOf(home), stopGraceMs)
            await disks?.remove(home)
            // fs.rm removes symlinks, never what they point to.
            await Fs.rm(home, { recursive: true, force: true })
            await Fs.rm(AgentHome.metaDirOf(home), { recursive: true, force: true })
          })
        }
        return Effect.gen(function*() {
          agents.delete(agentId)
          yield* Effect.promise(() => running.killAll(agent.home))
          yield* halt(agent)
          yield* Effect.promise(() => releaseNetwork(agent))
          sandbox.releaseAgent(agent.home)
          yield* Effect.promise(async () => {
            await disks?.remove(agent.home)
            await Fs.rm(agent.home, { recursive: true, force: true })
            await Fs.rm(agent.metaDir, { recursive: true, force: true })
          })
        }).pipe(Semaphore.withPermit(agent.lock), Semaphore.withPermit(agent.files))
      }),

    readLogs: (agentId, request) =>
      Effect.flatMap(find(agentId), (agent) =>
        Effect.tryPromise({
          try: () => Logs.read(agent.home, request, [...Object.values(EngineEnvironment.reveal(agent.environment)), Redacted.value(agent.token)]),
          catch: (cause) => new EngineUnavailable({ cause })
        })),

    // Written on disk, not with `openclaw skills install` (12 s a call, features §15): the gateway's skills watcher
    // and every later `skills list` see the folder as it is swapped in.
    installSkill: (agentId, skill) =>
      Effect.flatMap(
        Effect.zip(WorkspacePath.requireSkillName(skill.name), WorkspacePath.requireFileSet(skill.files)),
        ([name, files]) => onWorkspace(agentId, (workspace, home) => Workspace.installSkill({ home, workspace }, name, files))
      ),

    // OpenClaw has no `skills uninstall` (features §4): deleting the folder is what its docs say.
    removeSkill: (agentId, name) =>
      Effect.flatMap(WorkspacePath.requireSkillName(name), (checked) =>
        onWorkspace(agentId, (workspace, home) => Workspace.removeSkill({ home, workspace }, checked))),

    readSkill: (agentId, name) =>
      Effect.flatMap(WorkspacePath.requireSkillName(name), (checked) =>
        onWorkspace(agentId, (workspace, home) => Workspace.readSkill({ home, workspace }, checked))),

    // The CLI reads the skills from disk, so it answers with the gateway stopped too (about 2 s a call).
    listSkills: Effect.fnUntraced(function*(agentId) {
      const agent = yield* find(agentId)
      const stdout = yield* cli(agentId, agent, ["skills", "list", "--json"])
      return yield* parseSkillList(stdout).pipe(Effect.mapError((detail) => new EngineCliError({ agentId, detail })))
    }),

    writeWorkspaceFiles: (agentId, files) =>
      Effect.flatMap(WorkspacePath.requireFileSet(files), (checked) =>
        onWorkspace(agentId, (workspace, home) => Workspace.writeFiles({ home, workspace }, checked))),

    readWorkspaceFile: (agentId, path) =>
      Effect.flatMap(WorkspacePath.requireRelativePath(path), (checked) =>
        onWorkspace(agentId, (workspace, home) => Workspace.readFile({ home, workspace }, checked))),

    // On disk, from the agent's home down (the agent can replace `.openclaw` itself with a symlink): WorkspaceTree.ts.
    scanWorkspace: (agentId, options) =>
      onWorkspace(agentId, (workspace, home) => WorkspaceTree.scan({ home, workspace }, options.exclude)),

    // Opened under the agent's workspace lock; read after it, so that a slow reader holds up no other operation.
    readWorkspaceEntry: (agentId, path) =>
      Stream.unwrap(Effect.gen(function*() {
        const checked = yield* WorkspacePath.requireRelativePath(path)
        const fd = yield* Effect.acquireRelease(
          onWorkspace(agentId, async (workspace, home) => WorkspaceTree.openFile({ home, workspace }, checked)),
          (fd) => Effect.sync(() => NodeFs.closeSync(fd))
        )
        return WorkspaceTree.chunksOf(fd).pipe(Stream.mapError((cause) => new EngineUnavailable({ cause })))
      })),

    restoreWorkspace: (agentId, entries, options) =>
      Effect.flatMap(WorkspacePath.requireTree(entries), (tree) =>
        onWorkspace(agentId, (workspace, home) => WorkspaceTree.restore({ home, workspace }, tree, options.exclude)))
  })
})

/** Provides AgentEngine on OpenClaw gateways; closing the layer stops every gateway it started. */
export const layer = (options: Options): Layer.Layer<AgentEngine> => Layer.effect(AgentEngine, make(options))
