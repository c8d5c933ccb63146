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
 * memory per process). The network is shared: the gateway listens on loopback for Cairn.
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
  /** The bubblewrap binary; `bwrap` on Cairn's PATH by default. */
  readonly bwrapPath?: string
}

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
  | { readonly _tag: "Sandboxed"; readonly limits: Limits }
  | { readonly _tag: "Off" }
  | { readonly _tag: "Unavailable"; readonly reason: string }

export interface Sandbox {
  readonly state: State
  /** Wraps a process in the agent's sandbox; throws SandboxUnavailable when the sandbox cannot run here. */
  readonly launch: (process: Process) => Launch
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
const sandboxUid = 1000

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

/**
 * Per-sandbox pids cgroups, for when Cairn runs as root. RLIMIT_NPROC exempts root's user, and through the user
 * namespace the sandbox's user is root's outside: only a cgroup can hold its processes then. Made under Cairn's own
 * cgroup in the pids hierarchy (cgroup v1, or v2 where pids can be delegated there), one per sandbox, joined by the
 * launching shell before it executes bubblewrap (so every process of the sandbox is counted), removed when it ends.
 */
interface PidsCgroups {
  /** A new cgroup holding at most `max` processes; returns its directory. Throws when it cannot be made. */
  readonly create: (max: number) => string
  readonly remove: (dir: string) => void
}

let cgroupCounter = 0

const pidsCgroups = (): PidsCgroups | string => {
  const mounts = Fs.readFileSync("/proc/self/mountinfo", "utf8").split("\n").map((line) => {
    const [before, after] = line.split(" - ")
    const fields = before?.split(" ") ?? []
    const [fsType, , superOptions] = after?.split(" ") ?? []
    return { root: fields[3] ?? "", mountPoint: fields[4] ?? "", fsType, options: superOptions?.split(",") ?? [] }
  })
  const own = Fs.readFileSync("/proc/self/cgroup", "utf8").split("\n").map((line) => {
    const [, controllers, path] = line.split(/:(.*?):/)
    return { controllers: controllers?.split(",") ?? [], path: path ?? "" }
  })
  const under = (mount: { readonly root: string; readonly mountPoint: string }, path: string) =>
    Path.join(mount.mountPoint, Path.relative(mount.root, path))
  const v1 = mounts.find((mount) => mount.fsType === "cgroup" && mount.options.includes("pids"))
  const v1Own = own.find((entry) => entry.controllers.includes("pids"))
  const v2 = mounts.find((mount) => mount.fsType === "cgroup2")
  const v2Own = own.find((entry) => entry.controllers.length === 1 && entry.controllers[0] === "")
  let base: string
  try {
    if (v1 !== undefined && v1Own !== undefined) {
      base = Path.join(under(v1, v1Own.path), `cairn-sandboxes-${process.pid}`)
      Fs.mkdirSync(base, { recursive: true })
    } else if (v2 !== undefined && v2Own !== undefined) {
      const parent = under(v2, v2Own.path)
      base = Path.join(parent, `cairn-sandboxes-${process.pid}`)
      Fs.writeFileSync(Path.join(parent, "cgroup.subtree_control"), "+pids")
      Fs.mkdirSync(base, { recursive: true })
      Fs.writeFileSync(Path.join(base, "cgroup.subtree_control"), "+pids")
    } else {
      return "no pids cgroup controller is mounted"
    }
  } catch (error) {
    return `no pids cgroup can be made: ${error instanceof Error ? error.message : String(error)}`
  }
  // Those of earlier Cairn processes that are gone (a cgroup is removed with rmdir, once empty).
  const names = (() => {
    try {
      return Fs.readdirSync(Path.dirname(base))
    } catch {
      return []
    }
  })()
  for (const name of names) {
    const pid = /^cairn-sandboxes-(\d+)$/.exec(name)?.[1]
    if (pid === undefined || Number(pid) === process.pid || Fs.existsSync(`/proc/${pid}`)) continue
    const stale = Path.join(Path.dirname(base), name)
    try {
      for (const child of Fs.readdirSync(stale, { withFileTypes: true })) {
        if (child.isDirectory()) Fs.rmdirSync(Path.join(stale, child.name))
      }
      Fs.rmdirSync(stale)
    } catch {
      // Still in use after all; left for a later start.
    }
  }
  return {
    create: (max) => {
      const dir = Path.join(base, `${++cgroupCounter}`)
      Fs.mkdirSync(dir)
      Fs.writeFileSync(Path.join(dir, "pids.max"), String(max))
      return dir
    },
    // A cgroup can be removed once its last process is gone, which may take a moment after the exit is seen.
    remove: (dir) => {
      const attempt = (left: number) => {
        try {
          Fs.rmdirSync(dir)
        } catch (error) {
          const code = (error as NodeJS.ErrnoException).code
          if (code === "EBUSY" && left > 0) setTimeout(() => attempt(left - 1), 100).unref()
        }
      }
      attempt(50)
    }
  }
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
    const bwrapPath = options.bwrapPath ?? onPath("bwrap")
    const cgroups = process.getuid?.() === 0 ? pidsCgroups() : undefined
    if (typeof cgroups === "string") {
      yield* Effect.logWarning(
        `Cairn runs as root and ${cgroups}: the sandboxes' process limit does not hold (RLIMIT_NPROC exempts root), so ` +
          "a fork bomb in an agent is not contained. Run Cairn as an unprivileged user."
      )
    }
    const sandbox = bwrapPath === undefined
      ? undefined
      : bubblewrap(bwrapPath, options, limits, typeof cgroups === "string" ? undefined : cgroups)
    const failure = sandbox === undefined
      ? "bwrap is not installed: not found on PATH"
      : yield* Effect.promise(() => probe(sandbox))
    if (failure === undefined) {
      yield* Effect.logDebug(
        `Agent sandbox: bubblewrap; per sandbox at most ${limits.processes} processes, ${limits.fileSizeBytes} bytes ` +
          `per file, ${limits.memoryBytes} bytes of memory per process, ${limits.tmpBytes} bytes in /tmp`
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

/** No sandbox (SANDBOX=off): the process runs as a plain child, in its working directory. */
const plain: Sandbox = {
  state: { _tag: "Off" },
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
  launch: () => {
    throw new SandboxUnavailable(reason)
  }
})

/** Where `name` is found on Cairn's PATH (an absolute path: agents' environments have PATHs of their own). */
const onPath = (name: string) =>
  (process.env["PATH"] ?? "").split(Path.delimiter).filter((dir) => Path.isAbsolute(dir))
    .map((dir) => Path.join(dir, name))
    .find((path) => {
      try {
        Fs.accessSync(path, Fs.constants.X_OK)
        return Fs.statSync(path).isFile()
      } catch {
        return false
      }
    })

const bubblewrap = (bwrap: string, options: Options, limits: Limits, cgroups: PidsCgroups | undefined): Sandbox => {
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
    state: { _tag: "Sandboxed", limits },
    launch: (process) => {
      const home = Path.resolve(process.home)
      const args = [
        ...shared,
        ...(process.dieWithParent ? ["--die-with-parent"] : []),
        "--perms", "0644", "--ro-bind-data", "3", "/etc/passwd",
        "--perms", "0644", "--ro-bind-data", "4", "/etc/group",
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
      const inputs = [passwd(home), group]
      const cgroup = cgroups?.create(limits.processes)
      const prelude = [
        // bubblewrap ignores SIGTERM this way (an ignored signal stays ignored across exec; Node resets it for the
        // gateway), so a stop's SIGTERM to the group reaches the gateway and bubblewrap waits for it to exit.
        ...(process.gracefulTerm ? ["trap '' TERM"] : []),
        // Joined before bubblewrap starts, so that every process of the sandbox is in it; none runs outside it.
        ...(cgroup === undefined ? [] : [`echo $$ > "$1/cgroup.procs" || { echo "cannot join the sandbox's cgroup $1" >&2; exit 125; }`])
      ]
      const release = cgroup === undefined ? undefined : () => cgroups!.remove(cgroup)
      if (prelude.length === 0) return { file: bwrap, args, env, cwd: home, inputs }
      return {
        file: "/bin/sh",
        args: ["-c", `${prelude.join("; ")}; shift; exec "$@"`, "sh", cgroup ?? "-", bwrap, ...args],
        env,
        cwd: home,
        inputs,
        ...(release === undefined ? {} : { release })
      }
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
  try {
    const launch = sandbox.launch({
      home,
      cwd: home,
      argv: ["sh", "-c", "echo probe > file && cat file"],
      env: { PATH: "/usr/bin:/bin" },
      dieWithParent: true,
      gracefulTerm: false
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
  } finally {
    Fs.rmSync(home, { recursive: true, force: true })
  }
}
