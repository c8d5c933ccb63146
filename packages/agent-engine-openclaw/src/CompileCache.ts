/**
 * Node's compile cache for an engine version (decision 0054): V8's code for the engine's modules, made once by
 * Cairn and read by every gateway of that version, so that a start does not compile the same 30 MB of JavaScript
 * again. A code cache is code: one an agent could write would run in every other agent's gateway. So Cairn fills it
 * itself, outside any sandbox, by starting a gateway of the version once with a throwaway home (offline config, its
 * own loopback port) and the cache pointed at a staging directory; the cache is written when that gateway exits.
 * It is then made read only (files 0444, folders 0555) and renamed into place,
 * `<enginesDir>/<version>/compile-cache/<node>`, where `<node>` names the Node binary it was made by (V8's code is
 * only good for the V8 that made it), with Node's own folder in it linked under the sandbox user's name. Sandboxes see the engines directory read only, so a gateway there reads the
 * cache and its own writes (of modules the fill did not load) fail, silently.
 *
 * A cache that is missing (not filled yet, a fill that failed) means a start as before; a stale one too: Node checks
 * each entry against its source and compiles what does not match.
 */
import { Effect, Redacted } from "effect"
import { spawn } from "node:child_process"
import * as Crypto from "node:crypto"
import * as FsSync from "node:fs"
import * as Fs from "node:fs/promises"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import * as AgentHome from "./AgentHome.ts"
import { sleep } from "./Command.ts"
import { probeReady } from "./GatewayProcess.ts"
import { onPath } from "./HostEnvironment.ts"
import { sandboxUid } from "./Sandbox.ts"

export interface Options {
  /** The Node that runs the gateways: the cache is made by it, and for it. */
  readonly nodePath: string
  /** The environment OpenClaw processes start from (HostEnvironment.baseEnv). */
  readonly baseEnv: NodeJS.ProcessEnv
  /** How long the filling gateway may take to be ready; 3 minutes by default. */
  readonly readyTimeoutMs?: number
}

/**
 * The Node binary, as the cache's key: its real path, size and modification time, so that another Node gets a cache
 * of its own, filled anew. A Node that cannot be found (a bare name not on PATH) shares one: Node's own folder in it
 * is named after its version and V8's flags, so another Node only misses it.
 */
const nodeKey = (nodePath: string): string => {
  try {
    const real = FsSync.realpathSync(Path.isAbsolute(nodePath) ? nodePath : onPath(nodePath) ?? nodePath)
    const stat = FsSync.statSync(real)
    return Crypto.createHash("sha256").update(`${real}\0${stat.size}\0${stat.mtimeMs}`).digest("hex").slice(0, 16)
  } catch {
    return "node"
  }
}

/** The cache of the version installed in `installDir`, for `nodePath`, filled or not. */
export const cacheDir = (installDir: string, nodePath: string) => Path.join(installDir, "compile-cache", nodeKey(nodePath))

/**
 * The environment a gateway reads the cache with, or nothing when there is none yet. OpenClaw's launcher would
 * otherwise start itself again (a second Node start) to move the cache under a folder of its own naming; the cache
 * here is already the version's own, so that respawn is marked done.
 */
export const environment = (dir: string): NodeJS.ProcessEnv =>
  FsSync.existsSync(dir) ? { NODE_COMPILE_CACHE: dir, OPENCLAW_PACKAGED_COMPILE_CACHE_RESPAWNED: "1" } : {}

/** A free port on the loopback, for the filling gateway (asked of the kernel, then released). */
const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = Net.createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as Net.AddressInfo
      server.close(() => resolve(port))
    })
  })

/** Every file 0444 and every folder 0555 under `dir` (itself included): nothing there is to be written again. */
const makeReadOnly = async (dir: string) => {
  for (const entry of await Fs.readdir(dir, { withFileTypes: true })) {
    const path = Path.join(dir, entry.name)
    if (entry.isDirectory()) await makeReadOnly(path)
    else if (entry.isFile()) await Fs.chmod(path, 0o444)
  }
  await Fs.chmod(dir, 0o555)
}

const makeWritable = async (dir: string) => {
  await Fs.chmod(dir, 0o755).catch(() => {})
  for (const entry of await Fs.readdir(dir, { withFileTypes: true }).catch(() => [])) {
    if (entry.isDirectory()) await makeWritable(Path.join(dir, entry.name))
  }
}

const removeTree = async (dir: string) => {
  await makeWritable(dir)
  await Fs.rm(dir, { recursive: true, force: true })
}

/**
 * Node keeps a cache in a folder named after the Node, V8's flags and the user (`v24.21.0-x64-964aae3f-0`): one
 * filled by Cairn's user is not looked for by the sandbox's (uid 1000). Each folder gets a link under the sandbox
 * user's name too; under SANDBOX=off, gateways run as Cairn's user and find the folder itself.
 */
const linkForSandboxUser = async (dir: string) => {
  for (const name of await Fs.readdir(dir)) {
    const tagged = /^(.+)-(\d+)$/.exec(name)
    if (tagged === null || tagged[2] === String(sandboxUid)) continue
    await Fs.symlink(name, Path.join(dir, `${tagged[1]}-${sandboxUid}`)).catch(() => {})
  }
}

/** How many files are under `dir`. */
const countFiles = async (dir: string): Promise<number> => {
  let count = 0
  for (const entry of await Fs.readdir(dir, { withFileTypes: true }).catch(() => [])) {
    count += entry.isDirectory() ? await countFiles(Path.join(dir, entry.name)) : 1
  }
  return count
}

/**
 * Starts a gateway of the version (`entryFile`) with a throwaway home and the cache in `staging`, waits until it is
 * ready, and stops it, which writes the cache.
 */
const fillInto = async (options: Options, entryFile: string, staging: string) => {
  const home = await Fs.mkdtemp(Path.join(Os.tmpdir(), "cairn-compile-cache-fill-"))
  try {
    const port = await freePort()
    await Fs.mkdir(Path.join(home, ".openclaw", "logs"), { recursive: true })
    await Fs.mkdir(Path.join(home, "tmp"))
    await Fs.writeFile(AgentHome.configPath(home), JSON.stringify(AgentHome.offlineConfig(home, port)))
    const token = Redacted.make(Crypto.randomBytes(24).toString("hex"))
    const child = spawn(options.nodePath, [entryFile, "gateway", "run", "--port", String(port), "--bind", "loopback"], {
      cwd: home,
      env: {
        ...AgentHome.processEnv(options.baseEnv, home, token),
        TMPDIR: Path.join(home, "tmp"),
        NODE_COMPILE_CACHE: staging,
        OPENCLAW_PACKAGED_COMPILE_CACHE_RESPAWNED: "1"
      },
      stdio: "ignore",
      detached: true
    })
    const exited = new Promise<string>((resolve) => {
      child.once("error", (error) => resolve(error.message))
      child.once("exit", (code, signal) => resolve(signal ?? `exit code ${code}`))
    })
    let exit: string | undefined
    void exited.then((reason) => void (exit = reason))
    const signalGroup = (signal: NodeJS.Signals) => {
      try {
        process.kill(-child.pid!, signal)
      } catch {
        // Gone already.
      }
    }
    try {
      const deadline = Date.now() + (options.readyTimeoutMs ?? 180_000)
      while ((await probeReady({ port })) !== "ready") {
        if (exit !== undefined) throw new Error(`the gateway exited (${exit}) before it was ready`)
        if (Date.now() > deadline) throw new Error("the gateway was not ready in time")
        await sleep(250)
      }
    } finally {
      // Node writes the cache as the process exits: a SIGTERM (a graceful stop) lets it, a SIGKILL would not.
      signalGroup("SIGTERM")
      // A timer of its own, cleared: a pending one would keep a CLI process alive for its whole length.
      let timer: NodeJS.Timeout | undefined
      const inTime = await Promise.race([
        exited.then(() => true),
        new Promise<boolean>((resolve) => void (timer = setTimeout(() => resolve(false), 60_000)))
      ])
      clearTimeout(timer)
      if (!inTime) signalGroup("SIGKILL")
      await exited
      signalGroup("SIGKILL")
    }
  } finally {
    await Fs.rm(home, { recursive: true, force: true })
  }
}

/**
 * Fills the cache of the version in `installDir` unless it is there: staged beside it and renamed into place, so a
 * half-made cache is never used, and a race with another Cairn process sharing the engines directory is won by one.
 */
export const fill = (options: Options, installDir: string, entryFile: string): Effect.Effect<void, Error> =>
  Effect.tryPromise({
    try: async () => {
      const target = cacheDir(installDir, options.nodePath)
      if (FsSync.existsSync(target)) return
      await Fs.mkdir(Path.dirname(target), { recursive: true })
      const staging = `${target}.filling-${process.pid}-${Date.now().toString(36)}`
      await Fs.mkdir(staging)
      try {
        await fillInto(options, entryFile, staging)
        if ((await countFiles(staging)) === 0) throw new Error("the gateway wrote no compile cache")
        await linkForSandboxUser(staging)
        await makeReadOnly(staging)
        await Fs.rename(staging, target).catch((error) => {
          // Another Cairn process sharing the engines directory filled it first: theirs is as good.
          if (!FsSync.existsSync(target)) throw error
        })
      } finally {
        if (FsSync.existsSync(staging)) await removeTree(staging)
      }
    },
    catch: (cause) => cause instanceof Error ? cause : new Error(String(cause))
  })
