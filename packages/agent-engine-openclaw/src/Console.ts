/**
 * Short-lived processes run as an agent: its console commands (`sh -c`) and the OpenClaw CLI acting as it. Each is
 * spawned through the agent's sandbox (Sandbox.ts) in a process group of its own, and killed with its whole group
 * (and so its sandbox and PID namespace) on timeout, on interruption, when it exits (what it left running in the
 * background goes with it) and when its agent is destroyed. Each output stream is kept up to a cap while it is
 * read, never more; the rest is read and dropped, so the command is never blocked on a full pipe.
 */
import { completeUtf8Length, type ExecResult } from "@cairn/agent-engine"
import * as Fs from "node:fs/promises"
import { constants } from "node:os"
import * as Path from "node:path"
import { performance } from "node:perf_hooks"
import { type Launch, spawnLaunch } from "./Sandbox.ts"

export interface RunOptions {
  /** The whole process group is killed (SIGKILL) after this long: `timedOut`, exit code 137. */
  readonly timeoutMs: number
  /** Kept of each of stdout and stderr; `truncated` when either had more. */
  readonly maxOutputBytes: number
  /** Kills the process group when aborted (the caller was interrupted). */
  readonly signal?: AbortSignal
}

/** A process that could not be started at all (no result to report). */
export class SpawnFailed extends Error {
  override readonly name = "SpawnFailed"
}

interface Handle {
  readonly kill: () => void
  readonly done: Promise<unknown>
}

/** The processes running for each agent's home, so that a destroy (or the engine's end) can end them. */
export class Running {
  private readonly byHome = new Map<string, Set<Handle>>()

  /** Registers a process; returns the function that forgets it. */
  add(home: string, handle: Handle): () => void {
    let handles = this.byHome.get(home)
    if (handles === undefined) this.byHome.set(home, handles = new Set())
    handles.add(handle)
    return () => {
      handles.delete(handle)
      if (handles.size === 0 && this.byHome.get(home) === handles) this.byHome.delete(home)
    }
  }

  /** Kills every process running for `home` (for every home when absent) and resolves once they are all gone. */
  killAll(home?: string): Promise<void> {
    const handles = home === undefined ? [...this.byHome.values()].flatMap((set) => [...set]) : [...(this.byHome.get(home) ?? [])]
    for (const handle of handles) handle.kill()
    return Promise.all(handles.map((handle) => handle.done)).then(() => undefined)
  }
}

/** Keeps the first `max` bytes of a stream; notes that there was more. */
class CappedOutput {
  private readonly chunks: Array<Buffer> = []
  private size = 0
  truncated = false
  private readonly max: number
  constructor(max: number) {
    this.max = max
  }

  push(chunk: Buffer) {
    const room = this.max - this.size
    if (chunk.length > room) this.truncated = true
    if (room <= 0) return
    const kept = chunk.length > room ? chunk.subarray(0, room) : chunk
    this.chunks.push(kept)
    this.size += kept.length
  }

  /** The kept bytes as UTF-8; a character the cap cut in two is left out rather than shown broken. */
  text() {
    const bytes = Buffer.concat(this.chunks)
    return (this.truncated ? bytes.subarray(0, completeUtf8Length(bytes)) : bytes).toString("utf8")
  }
}

const signalNumber = (signal: NodeJS.Signals) => constants.signals[signal] ?? 0

/**
 * Runs a launched process to its end: its exit code (128 + the signal's number when a signal ended it), its
 * output within the caps, and how long it took. Rejects with SpawnFailed only when it cannot be started.
 */
export const run = (launch: Launch, options: RunOptions, running?: { readonly registry: Running; readonly home: string }) =>
  new Promise<ExecResult>((resolve, reject) => {
    const startedAt = performance.now()
    const stdout = new CappedOutput(options.maxOutputBytes)
    const stderr = new CappedOutput(options.maxOutputBytes)
    let timedOut = false
    let settled = false
    const child = spawnLaunch(launch, "ignore")
    const killGroup = () => {
      const pid = child.pid
      if (pid === undefined) return
      try {
        process.kill(-pid, "SIGKILL")
      } catch {
        // Already gone.
      }
    }
    let closed!: () => void
    const done = new Promise<void>((resolve) => void (closed = resolve))
    const forget = running?.registry.add(running.home, { kill: killGroup, done })
    const timer = setTimeout(() => {
      timedOut = true
      killGroup()
    }, options.timeoutMs)
    const onAbort = () => killGroup()
    options.signal?.addEventListener("abort", onAbort, { once: true })
    if (options.signal?.aborted === true) killGroup()
    let straggler: NodeJS.Timeout | undefined
    const finish = () => {
      clearTimeout(timer)
      if (straggler !== undefined) clearTimeout(straggler)
      options.signal?.removeEventListener("abort", onAbort)
      forget?.()
      closed()
    }

    child.stdout!.on("data", (chunk: Buffer) => stdout.push(chunk))
    child.stderr!.on("data", (chunk: Buffer) => stderr.push(chunk))
    child.on("error", (error) => {
      if (settled) return
      settled = true
      finish()
      reject(new SpawnFailed(`${launch.file}: ${error.message}`))
    })
    child.on("exit", () => {
      // What the command left running in its group goes with it (in a sandbox, its PID namespace already ended).
      killGroup()
      // Output pipes held open by a process that left the group (setsid, outside a sandbox) must not hold us up.
      straggler = setTimeout(() => {
        child.stdout!.destroy()
        child.stderr!.destroy()
      }, 1_000)
    })
    child.on("close", (code, signal) => {
      if (settled) return
      settled = true
      finish()
      resolve({
        stdout: stdout.text(),
        stderr: stderr.text(),
        exitCode: signal !== null ? 128 + signalNumber(signal) : code ?? 1,
        truncated: stdout.truncated || stderr.truncated,
        timedOut,
        durationMs: Math.round(performance.now() - startedAt)
      })
    })
  })

/**
 * Where a command runs: `cwd` (relative to the workspace, or absolute inside it; the workspace itself when absent)
 * with every symlink resolved on the host, as the path the sandbox sees it under (the workspace's own path, which
 * the sandbox binds). Undefined when it leads outside the workspace (by its path or through a symlink), is missing
 * or is not a directory. `anchor` names the workspace for the resolution: the adapter passes the workspace opened
 * from the home down without following a symlink (HomeFiles), so that a `.openclaw` swapped for a symlink meanwhile
 * is not resolved through.
 */
export const resolveWorkingDirectory = async (workspace: string, cwd: string | undefined, anchor = workspace): Promise<string | undefined> => {
  const isOutside = (relative: string) => relative === ".." || relative.startsWith(`..${Path.sep}`) || Path.isAbsolute(relative)
  const lexical = Path.relative(workspace, Path.resolve(workspace, cwd ?? "."))
  if (isOutside(lexical)) return undefined
  let realWorkspace: string
  let real: string
  try {
    realWorkspace = await Fs.realpath(anchor)
    real = await Fs.realpath(lexical === "" ? anchor : Path.join(anchor, lexical))
    if (!(await Fs.stat(real)).isDirectory()) return undefined
  } catch {
    return undefined
  }
  const relative = Path.relative(realWorkspace, real)
  if (isOutside(relative)) return undefined
  return Path.join(workspace, relative)
}
