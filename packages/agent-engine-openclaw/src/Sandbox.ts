/**
 * Agent isolation with bubblewrap (`bwrap`): every process Cairn runs for an agent (its gateway, its console
 * commands, the OpenClaw CLI acting as it) runs in a sandbox of its own that sees
 *
 * - the agent's home, writable, at the same absolute path (OpenClaw's config and state hold absolute paths);
 * - read only: the system (`/usr` and its `/bin`, `/lib*` links), a few pieces of `/etc` (DNS, TLS certificates,
 *   time zone, the dynamic linker's cache; a made-up `/etc/passwd` naming the sandbox's user), the Node binary's
 *   directory, the engines and the parent watch (`readOnly`);
 * - a private `/tmp` (tmpfs, size-capped), `/dev` (null, zero, random, tty, shm, pts) and a read-only `/proc` of its
 *   own PID namespace;
 *
 * and nothing else: not Cairn's data directory (its database, its `secrets.key`, other agents' homes), not `/root`,
 * `/home`, `/etc/shadow` or the project Cairn runs from. It runs in new user, PID, IPC, UTS and cgroup namespaces as
 * an unprivileged user (uid 1000, no capabilities), under resource limits (`prlimit`: processes, file size,
 * memory per process), in the agent's cgroup (AgentCgroups.ts: memory, CPU and processes of all the agent's sandboxes
 * together). Where Cairn can give agents networks of their own (AgentNetwork.ts: as root, with slirp4netns), each
 * sandbox joins its agent's network (a way out to the internet and nothing of the host), or, a CLI run while the
 * agent has none, a network of its own with only loopback. Elsewhere the network is shared: the gateway listens on
 * the host's loopback for Cairn.
 *
 * `auto` (the default) and `required` probe once, at startup, by running a trivial command in a sandbox. When that
 * fails, `auto` lets Cairn start with a loud warning and every agent process is refused (with the reason and the
 * fix) until bubblewrap works or SANDBOX=off is set; `required` stops Cairn at startup. `off` runs agents as plain
 * child processes, with a warning.
 */
import { Effect } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import type { Writable } from "node:stream"
import * as AgentCgroups from "./AgentCgroups.ts"
import * as AgentNetwork from "./AgentNetwork.ts"
import { onPath } from "./HostEnvironment.ts"

export type Mode = "auto" | "required" | "off"

/** Per sandbox: each gateway, console command and CLI run has its own. */
export interface Limits {
  /**
   * Writable memory a single process may map (RLIMIT_DATA: heap and private writable mappings). Address-space
   * reservations do not count (RLIMIT_AS would: Node reserves several GB it never uses, and V8 then refuses
   * WebAssembly). A gateway maps about 3.5 GB of it at start.
   */
  readonly memoryBytes: number
  /** Processes and threads of the sandbox together (RLIMIT_NPROC; an idle gateway has about 30). */
  readonly processes: number
  /** The largest file a process may write (RLIMIT_FSIZE): a shell is killed (SIGXFSZ), Node gets EFBIG. */
  readonly fileSizeBytes: number
  /** The size of the sandbox's private `/tmp` (memory backed). */
  readonly tmpBytes: number
}

const GiB = 1024 ** 3
const MiB = 1024 ** 2

export const defaultLimits: Limits = {
  memoryBytes: 8 * GiB,
  processes: 1024,
  fileSizeBytes: 1 * GiB,
  tmpBytes: 512 * MiB
}

export interface Options {
  readonly mode: Mode
  /** Cairn's data directory: hidden, even where it lies under a path that is otherwise visible. */
  readonly dataDir: string
  /** Host paths the sandbox sees read only, at the same paths (files or directories; missing ones are skipped). */
  readonly readOnly: ReadonlyArray<string>
  readonly limits?: Partial<Limits>
  /** What all processes of one agent may use together, in its cgroup (AgentCgroups.ts); defaults for what is not given. */
  readonly agentLimits?: Partial<AgentCgroups.AgentLimits>
  /** The bubblewrap binary; `bwrap` on Cairn's PATH by default. */
  readonly bwrapPath?: string
  /** The host services agents may reach from their networks (AGENT_EGRESS_ALLOW). */
  readonly egressAllow?: ReadonlyArray<AgentNetwork.EgressService>
  /** `shared`: agents share the host's network even where they could have their own (for comparisons). */
  readonly networks?: "private" | "shared"
  /** The Node that runs Cairn's connector in each agent's network (AgentNetwork.ts); Cairn's own by default. */
  readonly nodePath?: string
}

/**
 * The network a process runs in, where agents have networks of their own (ignored where the network is shared):
 * `join`, its agent's (`Sandbox.createNetwork`); `none`, a new one with only loopback.
 */
export type NetworkChoice = "none" | { readonly join: AgentNetwork.Network }

/** One process to run as an agent. */
export interface Process {
  /** The agent's home: the only writable place, visible at this same path. */
  readonly home: string
  /** The working directory, inside the home. */
  readonly cwd: string
  readonly argv: readonly [string, ...Array<string>]
  readonly env: NodeJS.ProcessEnv
  /**
   * Killed at once (SIGKILL) when Cairn dies: console commands and CLI runs. A gateway instead stops itself when
   * Cairn goes away, with its grace period (parent-watch.mjs), and the next Cairn reaps one that hangs.
   */
  readonly dieWithParent: boolean
  /**
   * SIGTERM sent to the process group reaches the sandboxed processes, not bubblewrap itself (which would die at
   * once and take the sandbox with it): for gateways, which stop gracefully.
   */
  readonly gracefulTerm: boolean
  /** `none` when not given. */
  readonly network?: NetworkChoice
}

/** What to spawn (detached, in a process group of its own) to run a Process; see `spawnLaunch`. */
export interface Launch {
  readonly file: string
  readonly args: ReadonlyArray<string>
  readonly env: NodeJS.ProcessEnv
  /** The host-side working directory of the spawned process. */
  readonly cwd: string
  /** Contents of extra pipes the child reads as fds 3, 4, …, written and closed right after the spawn. */
  readonly inputs: ReadonlyArray<string>
  /** Called once the process has exited (and its sandbox with it): releases what the launch made for it. */
  readonly release?: () => void
}

export type State =
  | {
    readonly _tag: "Sandboxed"
    readonly limits: Limits
    /** The agents' limits, and which of them hold (none where no cgroup can be made here). */
    readonly agentLimits: AgentCgroups.AgentLimits
    readonly enforced: ReadonlyArray<AgentCgroups.Controller>
  }
  | { readonly _tag: "Off" }
  | { readonly _tag: "Unavailable"; readonly reason: string }

export interface Sandbox {
  readonly state: State
  /** Wraps a process in the agent's sandbox; throws SandboxUnavailable when the sandbox cannot run here. */
  readonly launch: (process: Process) => Launch
  /** What the agent's processes used together (by its home); undefined where no cgroup holds it. */
  readonly agentUsage: (home: string) => AgentCgroups.AgentUsage | undefined
  /** Removes the agent's cgroup, once its processes are gone: when the agent is destroyed. */
  readonly releaseAgent: (home: string) => void
  /** Makes a network for an agent, for its sandboxes to join; undefined where agents share the host's. */
  readonly createNetwork: (() => Promise<AgentNetwork.Network>) | undefined
}

/** The sandbox cannot run on this machine and SANDBOX is not `off`: no agent process may start. */
export class SandboxUnavailable extends Error {
  readonly reason: string
  constructor(reason: string) {
    super(unavailableMessage(reason))
    this.name = "SandboxUnavailable"
    this.reason = reason
  }
}

const unavailableMessage = (reason: string) =>
  `agent sandbox unavailable: bubblewrap cannot run here (${reason}). Install bubblewrap (Debian/Ubuntu: apt-get ` +
  `install bubblewrap) and allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1; on ` +
  `Ubuntu 24.04+ kernel.apparmor_restrict_unprivileged_userns=0 or an AppArmor profile for bwrap), or set ` +
  `SANDBOX=off to run agents without isolation`

/** The sandbox's user: not root inside, and named in its /etc/passwd (Node's os.userInfo() needs an entry). */
export const sandboxUid = 1000

const passwd = (home: string) =>
  `root:x:0:0:root:/root:/usr/sbin/nologin\nagent:x:${sandboxUid}:${sandboxUid}:Cairn agent:${home}:/bin/sh\n` +
  "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
const group = `root:x:0:\nagent:x:${sandboxUid}:\nnogroup:x:65534:\n`

/**
 * The pieces of /etc programs need to resolve names, speak TLS, tell the time and load libraries. Not /etc as a
 * whole: it holds shadow, SSH host keys, TLS private keys (/etc/ssl/private) and credentials (npmrc, pip.conf).
 */
const etcAllowlist = [
  "alternatives", "ca-certificates", "ca-certificates.conf", "ssl/certs", "ssl/openssl.cnf", "pki/tls/certs",
  "pki/ca-trust", "crypto-policies", "resolv.conf", "hosts", "host.conf", "hostname", "nsswitch.conf", "gai.conf",
  "networks", "protocols", "services", "localtime", "timezone", "ld.so.cache", "ld.so.conf", "ld.so.conf.d",
  "mime.types", "os-release", "debian_version", "lsb-release", "locale.alias", "fonts", "terminfo", "magic",
  "magic.mime", "inputrc"
]

/** The system's top-level directories: bound read only, or recreated as the links they are (merged /usr). */
const systemDirs = ["usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32"]

const isInside = (path: string, dir: string) => path === dir || path.startsWith(dir.endsWith("/") ? dir : `${dir}/`)

const realpathOr = (path: string) => {
  try {
    return Fs.realpathSync(path)
  } catch {
    return path
  }
}

/** The bubblewrap arguments every sandbox shares, computed once: the system, /etc pieces, /proc, /dev, /tmp. */
const systemArguments = (limits: Limits): { readonly args: Array<string>; readonly visible: Array<string> } => {
  const args: Array<string> = []
  const visible: Array<string> = []
  for (const name of systemDirs) {
    const path = `/${name}`
    let stat: Fs.Stats
    try {
      stat = Fs.lstatSync(path)
    } catch {
      continue
    }
    if (stat.isSymbolicLink()) args.push("--symlink", Fs.readlinkSync(path), path)
    else if (stat.isDirectory()) {
      args.push("--ro-bind", path, path)
      visible.push(path)
    }
  }
  for (const name of etcAllowlist) {
    const path = `/etc/${name}`
    if (!Fs.existsSync(path)) continue
    // `-try`: a piece removed since (a package upgrade) must not stop every sandbox.
    args.push("--ro-bind-try", path, path)
    visible.push(path, realpathOr(path))
  }
  args.push(
    "--proc", "/proc",
    // Read only: as root, the sandbox's user owns /proc/sys and /proc/sysrq-trigger through the user namespace.
    "--remount-ro", "/proc",
    "--dev", "/dev",
    "--size", String(limits.tmpBytes), "--tmpfs", "/tmp",
    "--dir", "/var", "--symlink", "../tmp", "/var/tmp"
  )
  return { args, visible }
}

/** Makes the sandbox: probes bubblewrap once (unless `off`) and logs what agents will run in. */
export const make = (options: Options): Effect.Effect<Sandbox> =>
  Effect.gen(function*() {
    const limits: Limits = { ...defaultLimits, ...options.limits }
    if (options.mode === "off") {
      yield* Effect.logWarning(
        "SANDBOX=off: agents run WITHOUT isolation. Every agent's gateway and console commands can read and write " +
          "every other agent's workspace, Cairn's data directory (database, secrets.key) and anything else this " +
          "user can, with no limits on processes, memory or file size. Use this only where every agent is trusted."
      )
      return plain
    }
    const agentLimits: AgentCgroups.AgentLimits = { ...AgentCgroups.defaultAgentLimits, ...options.agentLimits }
    const bwrapPath = options.bwrapPath ?? onPath("bwrap")
    const cgroups = AgentCgroups.make(agentLimits)
    const enforced = typeof cgroups === "string" ? [] : cgroups.enforced
    const loose = (["memory", "cpu", "pids"] as const).filter((controller) => !enforced.includes(controller))
    if (loose.length > 0) {
      const why = typeof cgroups === "string" ? cgroups : `no ${loose.join(", ")} cgroup controller Cairn can use`
      yield* Effect.logWarning(
        `${why}: the agents' caps on ${loose.join(", ")} do not hold (AGENT_MEMORY_MAX, AGENT_CPU_MAX, AGENT_PIDS_MAX), ` +
          "so one agent can take what others need" +
          (loose.includes("pids") && process.getuid?.() === 0
            ? "; as root, not even a fork bomb is contained (RLIMIT_NPROC exempts root). Run Cairn as an unprivileged user"
            : "")
      )
    }
    let networks = options.networks === "shared" ? undefined : yield* agentNetworks(options)
    const sandboxWith = (withNetworks: AgentNetwork.AgentNetworks | undefined) =>
      bwrapPath === undefined
        ? undefined
        : bubblewrap(bwrapPath, options, limits, agentLimits, typeof cgroups === "string" ? undefined : cgroups, withNetworks)
    let sandbox = sandboxWith(networks)
    let failure = sandbox === undefined
      ? "bwrap is not installed: not found on PATH"
      : yield* Effect.promise(() => probe(sandbox!))
    if (failure !== undefined && networks !== undefined) {
      // The sandbox may work without a network of its own: agents then share the host's, loudly.
      const withoutNetworks = sandboxWith(undefined)!
      if ((yield* Effect.promise(() => probe(withoutNetworks))) === undefined) {
        yield* Effect.logWarning(
          `Agents share the host's network: a network of their own could not be set up (${failure}). Every agent can ` +
            "reach whatever listens on this host's loopback (Cairn, databases, other agents' gateways and apps)."
        )
        networks = undefined
        sandbox = withoutNetworks
        failure = undefined
      }
    }
    if (failure === undefined) {
      yield* Effect.logDebug(
        `Agent sandbox: bubblewrap; per sandbox at most ${limits.processes} processes, ${limits.fileSizeBytes} bytes ` +
          `per file, ${limits.memoryBytes} bytes of memory per process, ${limits.tmpBytes} bytes in /tmp; per agent ` +
          `${agentLimits.memoryBytes} bytes of memory, ${agentLimits.cpus} CPUs, ${agentLimits.pids} processes ` +
          `(enforced: ${enforced.join(", ") || "none"}); ${networks === undefined ? "the host's network shared" : "a network of its own"}`
      )
      return sandbox!
    }
    const message = unavailableMessage(failure)
    if (options.mode === "required") {
      return yield* Effect.die(new Error(`SANDBOX=required: Cairn cannot start: ${message}`))
    }
    yield* Effect.logError(
      `\n${"!".repeat(100)}\n!! NO AGENT CAN START: ${message}.\n${"!".repeat(100)}`
    )
    return unavailable(failure)
  })

/**
 * Networks of their own for agents, or undefined (with a warning) where they cannot be had: not root (joining a
 * namespace takes CAP_SYS_ADMIN), or a program missing. Under SANDBOX=required, a missing program stops Cairn.
 */
const agentNetworks = (options: Options) =>
  Effect.gen(function*() {
    const why = process.getuid?.() !== 0
      ? "Cairn does not run as root, and joining an agent's network namespace takes it"
      : AgentNetwork.make(options.egressAllow ?? [], options.nodePath ?? process.execPath)
    if (typeof why !== "string") return why
    if (options.mode === "required" && process.getuid?.() === 0) {
      return yield* Effect.die(new Error(`SANDBOX=required: Cairn cannot start: agents cannot have networks of their own: ${why}`))
    }
    yield* Effect.logWarning(
      `Agents share the host's network: ${why}. Every agent can reach whatever listens on this host's loopback ` +
        "(Cairn, databases, other agents' gateways and apps)."
    )
    return undefined
  })

/** No sandbox (SANDBOX=off): the process runs as a plain child, in its working directory. */
const plain: Sandbox = {
  state: { _tag: "Off" },
  createNetwork: undefined,
  agentUsage: () => undefined,
  releaseAgent: () => {},
  launch: (process) => ({
    file: process.argv[0],
    args: process.argv.slice(1),
    env: process.env,
    cwd: process.cwd,
    inputs: []
  })
}

const unavailable = (reason: string): Sandbox => ({
  state: { _tag: "Unavailable", reason },
  createNetwork: undefined,
  agentUsage: () => undefined,
  releaseAgent: () => {},
  launch: () => {
    throw new SandboxUnavailable(reason)
  }
})

/** The agent a home is of: its folder's name is the agent's id (`<dataDir>/agents/<agentId>`). */
const agentOf = (home: string) => Path.basename(Path.resolve(home))

const bubblewrap = (
  bwrap: string,
  options: Options,
  limits: Limits,
  agentLimits: AgentCgroups.AgentLimits,
  cgroups: AgentCgroups.AgentCgroups | undefined,
  networks: AgentNetwork.AgentNetworks | undefined
): Sandbox => {
  const system = systemArguments(limits)
  const dataDir = Path.resolve(options.dataDir)
  const readOnly = [...new Set(options.readOnly.map((path) => Path.resolve(path)))]
  const outsideData = readOnly.filter((path) => !isInside(path, dataDir))
  const insideData = readOnly.filter((path) => isInside(path, dataDir))
  // The data directory is hidden by not being bound; where it lies under a visible path, a tmpfs covers it.
  const visible = [...system.visible, ...outsideData.flatMap((path) => [path, realpathOr(path)])]
  const dataDirs = [dataDir, realpathOr(dataDir)]
  const coverData = dataDirs.some((dir) => visible.some((path) => isInside(dir, path)))
  const shared = [
    "--unshare-user", "--uid", String(sandboxUid), "--gid", String(sandboxUid),
    "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
    "--cap-drop", "ALL",
    ...system.args,
    ...outsideData.flatMap((path) => ["--ro-bind-try", path, path]),
    ...(coverData ? dataDirs.flatMap((dir) => ["--tmpfs", dir]) : []),
    ...insideData.flatMap((path) => ["--ro-bind-try", path, path])
  ]
  // Inside the sandbox: it must lie in the bound system directories.
  const prlimitPath = ["/usr/bin/prlimit", "/bin/prlimit", "/usr/sbin/prlimit", "/sbin/prlimit"].find((path) => Fs.existsSync(path))
  const prlimit = [
    prlimitPath ?? "prlimit",
    `--nproc=${limits.processes}`,
    `--fsize=${limits.fileSizeBytes}`,
    `--data=${limits.memoryBytes}`,
    "--"
  ]
  return {
    state: { _tag: "Sandboxed", limits, agentLimits, enforced: cgroups?.enforced ?? [] },
    createNetwork: networks?.create,
    agentUsage: (home) => cgroups?.usage(agentOf(home)),
    releaseAgent: (home) => cgroups?.remove(agentOf(home)),
    launch: (process) => {
      const home = Path.resolve(process.home)
      const choice = networks === undefined ? undefined : process.network ?? "none"
      const inputs = [passwd(home), group, ...(choice === undefined ? [] : [AgentNetwork.resolvConf])]
      const args = [
        ...shared,
        ...(process.dieWithParent ? ["--die-with-parent"] : []),
        "--perms", "0644", "--ro-bind-data", "3", "/etc/passwd",
        "--perms", "0644", "--ro-bind-data", "4", "/etc/group",
        ...(choice === undefined ? [] : ["--perms", "0644", "--ro-bind-data", "5", "/etc/resolv.conf"]),
        ...(choice === "none" ? ["--unshare-net"] : []),
        "--bind", home, home,
        ...(coverData ? dataDirs.flatMap((dir) => ["--remount-ro", dir]) : []),
        "--remount-ro", "/",
        "--chdir", process.cwd,
        "--",
        ...prlimit,
        ...process.argv
      ]
      // Inside, /tmp is the sandbox's own: a TMPDIR of Cairn's would not exist there.
      const env = { ...process.env, TMPDIR: "/tmp" }
      // Joined by its path (Cairn's descriptor of it) before anything else: the cgroup prelude and bubblewrap run in it.
      const enter = typeof choice === "object" ? [networks!.nsenter, `--net=${choice.join.path}`, "--"] : []
      // The namespace's path stays valid until the process exits (AgentNetwork.Network.hold).
      const release = typeof choice === "object" ? choice.join.hold() : undefined
      const withNetwork = (launch: Launch): Launch => {
        const [file, ...rest] = [...enter, launch.file, ...launch.args]
        return { ...launch, file: file!, args: rest, ...(release === undefined ? {} : { release }) }
      }
      const joins = cgroups?.join(agentOf(home)) ?? []
      const prelude = [
        // bubblewrap ignores SIGTERM this way (an ignored signal stays ignored across exec; Node resets it for the
        // gateway), so a stop's SIGTERM to the group reaches the gateway and bubblewrap waits for it to exit.
        ...(process.gracefulTerm ? ["trap '' TERM"] : []),
        // Joined before bubblewrap starts, so that every process of the sandbox is in the agent's cgroup (in each
        // hierarchy); none runs outside it. The `cgroup.procs` files come first in the arguments, then bubblewrap's.
        ...joins.map((_, index) =>
          `echo $$ > "$${index + 1}" || { echo "cannot join the agent's cgroup $${index + 1}" >&2; exit 125; }`
        )
      ]
      if (prelude.length === 0) return withNetwork({ file: bwrap, args, env, cwd: home, inputs })
      return withNetwork({
        file: "/bin/sh",
        args: ["-c", `${prelude.join("; ")}; shift ${joins.length}; exec "$@"`, "sh", ...joins, bwrap, ...args],
        env,
        cwd: home,
        inputs
      })
    }
  }
}

/**
 * Spawns a Launch in a process group of its own (so that a signal to the group reaches everything it started) and
 * feeds its input pipes. `stdin` is "pipe" for gateways (their parent watch) and "ignore" otherwise.
 */
export const spawnLaunch = (launch: Launch, stdin: "pipe" | "ignore"): ChildProcess => {
  let child: ChildProcess
  try {
    child = spawn(launch.file, launch.args, {
      cwd: launch.cwd,
      env: launch.env,
      stdio: [stdin, "pipe", "pipe", ...launch.inputs.map(() => "pipe" as const)],
      detached: true
    })
  } catch (error) {
    // Refused before any process existed (a NUL byte in an argument, say).
    launch.release?.()
    throw error
  }
  if (launch.release !== undefined) {
    const release = launch.release
    let released = false
    const once = () => {
      if (released) return
      released = true
      release()
    }
    child.once("exit", once)
    child.once("error", once)
  }
  launch.inputs.forEach((input, index) => {
    const pipe = child.stdio[3 + index] as Writable | null | undefined
    if (pipe === null || pipe === undefined) return
    pipe.on("error", () => {}) // a child that failed to start closed its end
    pipe.end(input)
  })
  return child
}

/** Runs `sh -c` in a sandbox with a throwaway home; undefined when it worked, else why not. */
const probe = async (sandbox: Sandbox): Promise<string | undefined> => {
  const home = Fs.mkdtempSync(Path.join(Os.tmpdir(), "cairn-sandbox-probe-"))
  let network: AgentNetwork.Network | undefined
  try {
    network = await sandbox.createNetwork?.()
    const launch = sandbox.launch({
      home,
      cwd: home,
      argv: ["sh", "-c", "echo probe > file && cat file"],
      env: { PATH: "/usr/bin:/bin" },
      dieWithParent: true,
      gracefulTerm: false,
      ...(network === undefined ? {} : { network: { join: network } })
    })
    return await new Promise<string | undefined>((resolve) => {
      const child = spawnLaunch(launch, "ignore")
      let output = ""
      child.stdout!.on("data", (chunk: Buffer) => void (output += chunk.toString()))
      child.stderr!.on("data", (chunk: Buffer) => void (output += chunk.toString()))
      const timer = setTimeout(() => child.kill("SIGKILL"), 20_000)
      child.on("error", (error: NodeJS.ErrnoException) => {
        clearTimeout(timer)
        resolve(error.code === "ENOENT" ? `${launch.file} is not installed` : error.message)
      })
      child.on("close", (code, signal) => {
        clearTimeout(timer)
        if (code === 0 && output.trim() === "probe") resolve(undefined)
        else resolve(`${output.trim().slice(0, 500) || "no output"}; exit ${signal ?? code}`)
      })
    })
  } catch (error) {
    return error instanceof Error ? error.message : String(error)
  } finally {
    network?.close()
    Fs.rmSync(home, { recursive: true, force: true })
    sandbox.releaseAgent(home)
  }
}
