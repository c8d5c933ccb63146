/**
 * The AgentEngine port on real OpenClaw gateways, one OS process per running agent. Engine versions are installed
 * from the npm registry on demand into `<enginesDir>/<version>` (shared by every agent on that version); each agent
 * gets `<dataDir>/agents/<agentId>/` as its OPENCLAW_HOME, a minimal offline `openclaw.json` and its own block of
 * ports. The gateway token only ever travels in the child's environment (`OPENCLAW_GATEWAY_TOKEN`), never on disk.
 * Gateways are killed when the layer's scope closes. See /work/shared/docs/reference/openclaw-engine.md §1, §2, §6.
 *
 * What this adapter keeps in memory only: which agents exist and their tokens. After the control plane restarts it
 * must provision again (the agent dir on disk is rewritten, the version in it kept) before starting an agent.
 */
import {
  AgentEngine,
  type AgentState,
  AgentNotProvisioned,
  type Device,
  DowngradeRefused,
  EngineCliError,
  EngineUnavailable,
  EngineVersion,
  GatewayFailedToStart,
  InvalidVersion,
  RestartFailed
} from "@cairn/agent-engine"
import { Deferred, Duration, Effect, Layer, Redacted, Schema, Semaphore } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"

export interface Options {
  /** The data root: agents live in `<dataDir>/agents/<agentId>`. */
  readonly dataDir: string
  /** Where engine versions are installed; `<dataDir>/engines` by default. Tests share one to skip re-installs. */
  readonly enginesDir?: string
  /** The allowlist of versions offered; by default only the latest stable release on the registry. */
  readonly versions?: ReadonlyArray<string>
  /** How long a gateway may take to answer `/readyz` with 200; 90 seconds by default. */
  readonly startTimeout?: Duration.Input
  /** How long a gateway may take to exit after SIGTERM before it gets SIGKILL; 15 seconds by default. */
  readonly stopGrace?: Duration.Input
  /** The first agent's gateway port; agent n gets `basePort + 120·n` (OpenClaw derives ports up to base+110). */
  readonly basePort?: number
  /** The Node binary that runs OpenClaw (needs ≥ 24.16); the current one by default. */
  readonly nodePath?: string
  /** The npm CLI used to list and install versions. */
  readonly npmPath?: string
}

const portSpacing = 120
const logTailLines = 60

/** Agent ids become directory names, so only plain names are accepted. */
const safeAgentId = /^(?!\.{1,2}$)[A-Za-z0-9._-]{1,128}$/

/** Stable CalVer releases only: `2026.9.6`, not `2026.9.1-beta.1` nor `2026.7.1-2`. */
const stableVersion = /^\d{4}\.\d{1,2}\.\d{1,2}$/

/** The environment every OpenClaw invocation gets, so that nothing reaches outside the loopback (§1). */
const offlineEnv = {
  OPENCLAW_NO_AUTO_UPDATE: "1",
  DO_NOT_TRACK: "1",
  OPENCLAW_DISABLE_BONJOUR: "1",
  OPENCLAW_OFFLINE: "1",
  OPENCLAW_TELEMETRY_ENDPOINT: "http://127.0.0.1:9/api/latest-version",
  CLAWHUB_DISABLE_TELEMETRY: "1"
}

/** What the adapter persists next to the engine's own files in the agent's home. */
const AgentMeta = Schema.Struct({ version: Schema.String, slot: Schema.Int })
type AgentMeta = typeof AgentMeta.Type
const decodeMeta = Schema.decodeUnknownSync(Schema.fromJsonString(AgentMeta))

/** The parts of `openclaw devices list --json` the port exposes; unknown fields are ignored. */
const RawDevice = Schema.Struct({
  deviceId: Schema.optionalKey(Schema.String),
  requestId: Schema.optionalKey(Schema.String),
  id: Schema.optionalKey(Schema.String),
  displayName: Schema.optionalKey(Schema.String),
  name: Schema.optionalKey(Schema.String),
  clientId: Schema.optionalKey(Schema.String),
  ts: Schema.optionalKey(Schema.Number),
  createdAtMs: Schema.optionalKey(Schema.Number)
})
const DeviceList = Schema.Struct({ pending: Schema.Array(RawDevice), paired: Schema.Array(RawDevice) })
const decodeDeviceList = Schema.decodeUnknownEffect(Schema.fromJsonString(DeviceList))

const toDevice = (raw: typeof RawDevice.Type): Device => {
  const id = raw.deviceId ?? raw.requestId ?? raw.id ?? "unknown"
  const at = raw.ts ?? raw.createdAtMs
  return {
    id,
    name: raw.displayName ?? raw.name ?? raw.clientId ?? id,
    ...(at === undefined ? {} : { requestedAt: new Date(at).toISOString() })
  }
}

/** The last lines a process printed, kept for error reports. */
class LogTail {
  private lines: Array<string> = []
  private partial = ""
  push(chunk: Buffer | string) {
    const text = this.partial + chunk.toString()
    const parts = text.split("\n")
    this.partial = parts.pop() ?? ""
    // Strip ANSI colours: the tail ends up in error messages and logs.
    // eslint-disable-next-line no-control-regex
    for (const line of parts) this.lines.push(line.replace(/\x1b\[[0-9;]*m/g, ""))
    if (this.lines.length > logTailLines) this.lines = this.lines.slice(-logTailLines)
  }
  toString() {
    return [...this.lines, this.partial].filter((line) => line.length > 0).join("\n")
  }
}

interface Gateway {
  readonly child: ChildProcess
  readonly tail: LogTail
  /** Resolves with the exit code (or signal) once the process is gone. */
  readonly exited: Promise<string>
  /** Set before the adapter signals the process, so its exit is not taken for a crash. */
  stopping: boolean
}

interface Agent {
  readonly dir: string
  readonly slot: number
  version: string
  token: Redacted.Redacted<string>
  state: AgentState
  gateway: Gateway | undefined
  readonly lock: Semaphore.Semaphore
}

interface CommandResult {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Runs a command to completion, killing it after `timeoutMs`; never rejects on a non-zero exit. */
const runCommand = (
  command: string,
  args: ReadonlyArray<string>,
  options: { readonly env: NodeJS.ProcessEnv; readonly cwd?: string; readonly timeoutMs: number }
): Promise<CommandResult> =>
  new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      env: options.env,
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
      stdio: ["ignore", "pipe", "pipe"],
      timeout: options.timeoutMs,
      killSignal: "SIGKILL"
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk: Buffer) => void (stdout += chunk.toString()))
    child.stderr.on("data", (chunk: Buffer) => void (stderr += chunk.toString()))
    child.on("error", reject)
    child.on("close", (code) => resolve({ code, stdout, stderr }))
  })

const pathExists = (path: string) =>
  Fs.access(path).then(
    () => true,
    () => false
  )

/** Whether anything answers HTTP on the port: used to wait for readiness and to refuse a port already taken. */
const probeReady = async (port: number): Promise<"ready" | "answering" | "silent"> => {
  try {
    const response = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(2_000) })
    await response.body?.cancel()
    return response.status === 200 ? "ready" : "answering"
  } catch {
    return "silent"
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** Signals the gateway's whole process group: it spawns worker processes of its own. */
const signalGroup = (gateway: Gateway, signal: NodeJS.Signals, evenAfterExit = false) => {
  const pid = gateway.child.pid
  if (pid === undefined) return
  if (!evenAfterExit && (gateway.child.exitCode !== null || gateway.child.signalCode !== null)) return
  try {
    process.kill(-pid, signal)
  } catch {
    try {
      gateway.child.kill(signal)
    } catch {
      // Already gone.
    }
  }
}

/** Builds the engine; every gateway it started is stopped (SIGTERM, then SIGKILL) when the scope closes. */
export const make = Effect.fnUntraced(function*(options: Options) {
  const dataDir = Path.resolve(options.dataDir)
  const enginesDir = Path.resolve(options.enginesDir ?? Path.join(dataDir, "engines"))
  const agentsDir = Path.join(dataDir, "agents")
  const startTimeoutMs = Duration.toMillis(Duration.fromInputUnsafe(options.startTimeout ?? "90 seconds"))
  const stopGraceMs = Duration.toMillis(Duration.fromInputUnsafe(options.stopGrace ?? "15 seconds"))
  const basePort = options.basePort ?? 18789
  const nodePath = options.nodePath ?? process.execPath
  const npmPath = options.npmPath ?? "npm"
  // npm and OpenClaw's install scripts must run on the same (new enough) Node as the gateways. OpenClaw processes get
  // a minimal environment, not the host's: OpenClaw changes behaviour under test runners (it reads VITEST*, NODE_ENV;
  // under vitest `devices list --json` prints nothing) and must not see the control plane's secrets.
  const passThrough = ["LANG", "LC_ALL", "TZ", "TMPDIR", "USER", "LOGNAME", "SHELL"]
  const toolEnv: NodeJS.ProcessEnv = {
    ...Object.fromEntries(passThrough.flatMap((name) => {
      const value = process.env[name]
      return value === undefined ? [] : [[name, value]]
    })),
    PATH: `${Path.dirname(nodePath)}${Path.delimiter}${process.env["PATH"] ?? ""}`
  }
  // npm itself keeps the host's environment: its config (~/.npmrc, npm_config_*, proxies) says how to reach the registry.
  const npmEnv: NodeJS.ProcessEnv = { ...process.env, PATH: toolEnv["PATH"] }

  const agents = new Map<string, Agent>()
  const agentsLock = yield* Semaphore.make(1)

  // ---- versions -------------------------------------------------------------------------------------------------

  let versionsCache: ReadonlyArray<string> | undefined
  const fetchVersions = Effect.tryPromise({
    try: async () => {
      const result = await runCommand(npmPath, ["view", "openclaw", "versions", "--json"], {
        env: npmEnv,
        timeoutMs: 60_000
      })
      if (result.code !== 0) throw new Error(`npm view openclaw versions failed: ${result.stderr.trim()}`)
      const all = JSON.parse(result.stdout) as unknown
      if (!Array.isArray(all)) throw new Error("npm view openclaw versions: unexpected output")
      const stable = all.filter((v): v is string => typeof v === "string" && stableVersion.test(v))
        .sort(EngineVersion.order)
      if (options.versions === undefined) return stable.slice(-1)
      const allowed = new Set(options.versions)
      return stable.filter((v) => allowed.has(v))
    },
    catch: (cause) => new EngineUnavailable({ cause })
  })
  const listVersions = Effect.suspend(() =>
    versionsCache !== undefined
      ? Effect.succeed(versionsCache)
      : Effect.tap(fetchVersions, (versions) => Effect.sync(() => void (versionsCache = versions)))
  )

  const engineDir = (version: string) => Path.join(enginesDir, version)
  const entryFile = (version: string) => Path.join(engineDir(version), "node_modules", "openclaw", "openclaw.mjs")

  /** One install per version at a time: concurrent requests for one version wait on the same Deferred. */
  const installs = new Map<string, Deferred.Deferred<void, EngineUnavailable>>()
  const install = (version: string) =>
    Effect.tryPromise({
      try: async () => {
        if (await pathExists(entryFile(version))) return
        await Fs.mkdir(enginesDir, { recursive: true })
        // Install beside the target and rename, so a half-finished install is never taken for a good one.
        const staging = `${engineDir(version)}.installing-${process.pid}-${Date.now().toString(36)}`
        await Fs.mkdir(staging, { recursive: true })
        try {
          const result = await runCommand(
            npmPath,
            ["install", "--prefix", staging, `openclaw@${version}`, "--no-audit", "--no-fund", "--loglevel=error"],
            { env: npmEnv, timeoutMs: 15 * 60_000 }
          )
          if (result.code !== 0) throw new Error(`npm install openclaw@${version} failed: ${result.stderr.trim()}`)
          await Fs.rename(staging, engineDir(version))
        } finally {
          await Fs.rm(staging, { recursive: true, force: true })
        }
      },
      catch: (cause) => new EngineUnavailable({ cause })
    })
  const ensureInstalled = (version: string): Effect.Effect<void, EngineUnavailable> =>
    Effect.suspend(() => {
      const running = installs.get(version)
      if (running !== undefined) return Deferred.await(running)
      const done = Deferred.makeUnsafe<void, EngineUnavailable>()
      installs.set(version, done)
      return install(version).pipe(
        Effect.onExit((exit) =>
          Effect.sync(() => {
            // Forget failures so a later call retries; keep successes (the check on disk is cheap anyway).
            if (exit._tag === "Failure") installs.delete(version)
          }).pipe(Effect.andThen(Deferred.done(done, exit)))
        ),
        Effect.uninterruptible
      )
    })

  const checkOffered = (version: string) =>
    Effect.flatMap(listVersions, (versions) =>
      versions.includes(version) ? Effect.void : Effect.fail(new InvalidVersion({ version })))

  // ---- agents on disk -------------------------------------------------------------------------------------------

  const stateDir = (agent: Agent) => Path.join(agent.dir, ".openclaw")
  const configPath = (agent: Agent) => Path.join(stateDir(agent), "openclaw.json")
  const portOf = (agent: Agent) => basePort + portSpacing * agent.slot

  /** The minimal offline config of §2.1; the token is a reference to the environment, never the secret itself. */
  const configFor = (dir: string, port: number) => ({
    gateway: {
      mode: "local",
      port,
      bind: "loopback",
      auth: { mode: "token", token: "${OPENCLAW_GATEWAY_TOKEN}" }
    },
    update: { checkOnStart: false },
    telemetry: { enabled: false },
    discovery: { mdns: { mode: "off" } },
    models: { catalogRefresh: { enabled: false } },
    logging: { file: Path.join(dir, ".openclaw", "logs", "openclaw.log") }
  })

  const writeAgentFiles = (dir: string, meta: AgentMeta) =>
    Effect.tryPromise({
      try: async () => {
        await Fs.mkdir(Path.join(dir, ".openclaw", "logs"), { recursive: true })
        const config = configFor(dir, basePort + portSpacing * meta.slot)
        await Fs.writeFile(Path.join(dir, ".openclaw", "openclaw.json"), JSON.stringify(config, null, 2) + "\n")
        await Fs.writeFile(Path.join(dir, "cairn-agent.json"), JSON.stringify(meta) + "\n")
      },
      catch: (cause) => new EngineUnavailable({ cause })
    })

  const readMeta = (dir: string) =>
    Effect.promise(() =>
      Fs.readFile(Path.join(dir, "cairn-agent.json"), "utf8").then(
        (text) => {
          try {
            return decodeMeta(text)
          } catch {
            return undefined
          }
        },
        () => undefined
      )
    )

  const persistVersion = (agent: Agent) =>
    Effect.promise(() =>
      Fs.writeFile(Path.join(agent.dir, "cairn-agent.json"), JSON.stringify({ version: agent.version, slot: agent.slot }) + "\n")
    )

  /** The environment of every OpenClaw process of an agent: its own home, the offline flags and its token. */
  const agentEnv = (agent: Agent): NodeJS.ProcessEnv => ({
    ...toolEnv,
    ...offlineEnv,
    HOME: agent.dir,
    OPENCLAW_HOME: agent.dir,
    OPENCLAW_CONFIG_PATH: configPath(agent),
    OPENCLAW_GATEWAY_TOKEN: Redacted.value(agent.token)
  })

  const find = (agentId: string) =>
    Effect.suspend(() => {
      const agent = agents.get(agentId)
      return agent === undefined ? Effect.fail(new AgentNotProvisioned({ agentId })) : Effect.succeed(agent)
    })

  // ---- processes ------------------------------------------------------------------------------------------------

  /** SIGTERM to the process group, SIGKILL after the grace period; resolves once the main process is gone. */
  const terminate = async (gateway: Gateway, graceMs: number) => {
    gateway.stopping = true
    signalGroup(gateway, "SIGTERM")
    const exitedInTime = await Promise.race([gateway.exited.then(() => true), sleep(graceMs).then(() => false)])
    if (!exitedInTime) signalGroup(gateway, "SIGKILL")
    await gateway.exited
    // The workers share the group; make sure none outlives the gateway.
    signalGroup(gateway, "SIGKILL", true)
  }

  const halt = (agent: Agent) =>
    Effect.promise(async () => {
      const gateway = agent.gateway
      if (gateway !== undefined) await terminate(gateway, stopGraceMs)
      agent.gateway = undefined
      agent.state = "stopped"
    })

  const launch = (agentId: string, agent: Agent) => {
    // This start's own gateway: a concurrent stop clears `agent.gateway`, but the failure below must still see it.
    let launched: Gateway | undefined
    return Effect.tryPromise({
      try: async (signal) => {
        const port = portOf(agent)
        if ((await probeReady(port)) !== "silent") {
          throw new Error(`port ${port} is already in use by another process`)
        }
        const tail = new LogTail()
        const child = spawn(nodePath, [entryFile(agent.version), "gateway", "run", "--port", String(port), "--bind", "loopback"], {
          cwd: agent.dir,
          env: agentEnv(agent),
          stdio: ["ignore", "pipe", "pipe"],
          detached: true // its own process group, so stop can reach the gateway's workers too
        })
        child.stdout!.on("data", (chunk: Buffer) => tail.push(chunk))
        child.stderr!.on("data", (chunk: Buffer) => tail.push(chunk))
        const exited = new Promise<string>((resolve) => {
          child.on("error", (error) => {
            tail.push(`spawn failed: ${error.message}\n`)
            resolve("spawn error")
          })
          child.on("exit", (code, sig) => resolve(sig ?? `exit code ${code}`))
        })
        const gateway: Gateway = { child, tail, exited, stopping: false }
        launched = gateway
        agent.gateway = gateway
        agent.state = "starting"
        void exited.then(() => {
          if (agent.gateway === gateway && !gateway.stopping) agent.state = "crashed"
        })
        const deadline = Date.now() + startTimeoutMs
        let exitReason: string | undefined
        void exited.then((reason) => void (exitReason = reason))
        while (true) {
          if (exitReason !== undefined) throw new Error(`the gateway exited (${exitReason}) before it was ready`)
          if (signal.aborted) throw new Error("the start was interrupted")
          if ((await probeReady(port)) === "ready" && exitReason === undefined) break
          if (Date.now() > deadline) throw new Error(`the gateway was not ready within ${startTimeoutMs} ms`)
          await sleep(250)
        }
        agent.state = "running"
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
          const stopped = gateway?.stopping === true
          if (gateway !== undefined) yield* Effect.promise(() => terminate(gateway, 2_000))
          if (agent.gateway === gateway) agent.gateway = undefined
          agent.state = stopped ? "stopped" : "crashed"
          return yield* new GatewayFailedToStart({ agentId, logTail })
        })
      ),
      // A caller that gives up on a start leaves no half-started gateway behind.
      Effect.onInterrupt(() => halt(agent))
    )
  }

  const start = (agentId: string, agent: Agent) =>
    Effect.suspend(() => {
      if (agent.state === "running" && agent.gateway !== undefined) return Effect.void
      return ensureInstalled(agent.version).pipe(
        Effect.catch((error) => Effect.fail(new GatewayFailedToStart({ agentId, logTail: String(error.cause) }))),
        Effect.andThen(
          // A crashed gateway may have left its workers behind.
          agent.gateway === undefined ? Effect.void : halt(agent)
        ),
        Effect.andThen(launch(agentId, agent))
      )
    })

  // Children must not outlive the engine: stop them all with the scope, and kill them if Node exits first.
  const killAllNow = () => {
    for (const agent of agents.values()) if (agent.gateway !== undefined) signalGroup(agent.gateway, "SIGKILL", true)
  }
  process.on("exit", killAllNow)
  yield* Effect.addFinalizer(() =>
    Effect.promise(async () => {
      await Promise.all(
        [...agents.values()].map(async (agent) => {
          if (agent.gateway !== undefined) await terminate(agent.gateway, Math.min(stopGraceMs, 5_000))
          agent.gateway = undefined
          agent.state = "stopped"
        })
      )
      process.off("exit", killAllNow)
    })
  )

  // ---- the port -------------------------------------------------------------------------------------------------

  return AgentEngine.of({
    listVersions,

    provision: Effect.fnUntraced(function*(agentId, spec) {
      if (agents.has(agentId)) return
      if (!safeAgentId.test(agentId)) {
        return yield* Effect.die(new Error(`OpenClawAgentEngine: agent id ${JSON.stringify(agentId)} is not a plain name`))
      }
      yield* checkOffered(spec.version)
      yield* ensureInstalled(spec.version)
      yield* Effect.gen(function*() {
        if (agents.has(agentId)) return
        const dir = Path.join(agentsDir, agentId)
        const previous = yield* readMeta(dir)
        const taken = new Set([...agents.values()].map((agent) => agent.slot))
        let slot = previous?.slot ?? 0
        if (previous === undefined || taken.has(slot)) {
          slot = 0
          while (taken.has(slot)) slot++
        }
        // An agent dir left by an earlier run keeps its version: state migrations only go forward.
        const version = previous !== undefined && EngineVersion.isOlder(spec.version, previous.version)
          ? previous.version
          : spec.version
        yield* writeAgentFiles(dir, { version, slot })
        agents.set(agentId, {
          dir,
          slot,
          version,
          token: spec.gatewayToken,
          state: "stopped",
          gateway: undefined,
          lock: yield* Semaphore.make(1)
        })
      }).pipe(Semaphore.withPermit(agentsLock))
    }),

    start: (agentId) => Effect.flatMap(find(agentId), (agent) => start(agentId, agent).pipe(Semaphore.withPermit(agent.lock))),

    // A gateway still starting is stopped at once, and its start fails; otherwise stop waits its turn on the lock.
    stop: (agentId) =>
      Effect.flatMap(find(agentId), (agent) =>
        agent.state === "starting" && agent.gateway !== undefined
          ? halt(agent)
          : halt(agent).pipe(Semaphore.withPermit(agent.lock))),

    restart: (agentId, restartOptions = {}) =>
      Effect.flatMap(find(agentId), (agent) =>
        Effect.gen(function*() {
          const target = restartOptions.version ?? agent.version
          if (restartOptions.version !== undefined) {
            yield* checkOffered(target).pipe(
              Effect.catchTag("EngineUnavailable", (cause) => Effect.fail(new RestartFailed({ agentId, cause })))
            )
            if (EngineVersion.isOlder(target, agent.version)) {
              return yield* new DowngradeRefused({ from: agent.version, to: target })
            }
          }
          // Install before stopping, so a slow or failed install costs no downtime.
          yield* ensureInstalled(target).pipe(Effect.catch((cause) => Effect.fail(new RestartFailed({ agentId, cause }))))
          yield* halt(agent)
          if (target !== agent.version) {
            agent.version = target
            yield* persistVersion(agent)
          }
          yield* start(agentId, agent).pipe(Effect.catch((cause) => Effect.fail(new RestartFailed({ agentId, cause }))))
        }).pipe(Semaphore.withPermit(agent.lock))),

    status: (agentId) => Effect.map(find(agentId), (agent) => ({ state: agent.state, version: agent.version })),

    listDevices: Effect.fnUntraced(function*(agentId) {
      const agent = yield* find(agentId)
      if (agent.state !== "running") {
        return yield* new EngineCliError({ agentId, detail: `the gateway is not running (${agent.state})` })
      }
      const result = yield* Effect.tryPromise({
        try: () =>
          runCommand(nodePath, [entryFile(agent.version), "devices", "list", "--json"], {
            env: agentEnv(agent),
            cwd: agent.dir,
            timeoutMs: 60_000
          }),
        catch: (cause) => new EngineCliError({ agentId, detail: String(cause) })
      })
      if (result.code !== 0) {
        return yield* new EngineCliError({
          agentId,
          detail: (result.stdout.trim() || result.stderr.trim() || `exit code ${result.code}`).slice(0, 2_000)
        })
      }
      // The CLI may print notices before its JSON document: parse from the first line that opens an object.
      const json = result.stdout.slice(Math.max(0, result.stdout.search(/^\{/m)))
      const list = yield* decodeDeviceList(json).pipe(
        Effect.catch((issue) =>
          Effect.fail(
            new EngineCliError({ agentId, detail: `unexpected output (${issue}): ${result.stdout.slice(0, 1_000)}` })
          )
        )
      )
      return { pending: list.pending.map(toDevice), paired: list.paired.map(toDevice) }
    }),

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

    destroy: (agentId) =>
      Effect.suspend(() => {
        const agent = agents.get(agentId)
        if (agent === undefined) {
          // An agent left on disk by an earlier run of the control plane is removed too.
          return safeAgentId.test(agentId)
            ? Effect.promise(() => Fs.rm(Path.join(agentsDir, agentId), { recursive: true, force: true }))
            : Effect.void
        }
        return Effect.gen(function*() {
          agents.delete(agentId)
          yield* halt(agent)
          yield* Effect.promise(() => Fs.rm(agent.dir, { recursive: true, force: true }))
        }).pipe(Semaphore.withPermit(agent.lock))
      })
  })
})

/** Provides AgentEngine on OpenClaw gateways; closing the layer stops every gateway it started. */
export const layer = (options: Options): Layer.Layer<AgentEngine> => Layer.effect(AgentEngine, make(options))
