/**
 * One gateway process: spawned in the agent's sandbox (Sandbox.ts) and its own process group (it forks workers of
 * its own) with a parent watch preloaded (parent-watch.mjs), its output kept as a tail for error reports, its pid
 * (bubblewrap's, whose group holds the gateway) in the agent's home so a later Cairn can reap a gateway an earlier
 * one left behind, and stopped with SIGTERM, then SIGKILL. In a sandbox, the gateway's PID namespace ends with
 * it: no worker outlives it, even one that left the process group.
 */
import type { ChildProcess } from "node:child_process"
import * as FsSync from "node:fs"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import { pathToFileURL } from "node:url"
import { sleep } from "./Command.ts"
import { type Sandbox, spawnLaunch } from "./Sandbox.ts"

const logTailLines = 60
/** The parent watch's file: the sandbox must let the gateway read it. */
export const parentWatchPath = Path.join(import.meta.dirname, "parent-watch.mjs")
const parentWatch = pathToFileURL(parentWatchPath).href

/** The last lines a process printed, kept for error reports. */
export class LogTail {
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

export interface Gateway {
  readonly child: ChildProcess
  readonly tail: LogTail
  /** Resolves with the exit code (or signal) once the process is gone. */
  readonly exited: Promise<string>
  /** Set before Cairn signals the process, so its exit is not taken for a crash. */
  stopping: boolean
}

export interface SpawnOptions {
  readonly nodePath: string
  readonly entryFile: string
  readonly home: string
  readonly port: number
  readonly env: NodeJS.ProcessEnv
  /** How long the parent watch lets the gateway shut down once Cairn is gone. */
  readonly stopGraceMs: number
  /** Where it runs; throws SandboxUnavailable when no sandbox can run and SANDBOX is not `off`. */
  readonly sandbox: Sandbox
}

/** Where a gateway's pid is kept while it runs (and read by tests to find the process). */
export const pidFile = (home: string) => Path.join(home, "gateway.pid")

/*
 * The pid file is written and removed synchronously, and removed only while it still names this process: a restart
 * spawns the next gateway as soon as the last one exits, and an asynchronous removal for the old one could land after
 * the new one's write, leaving a running gateway no later Cairn could find.
 */
const recordPid = (home: string, pid: number) => {
  try {
    FsSync.writeFileSync(pidFile(home), `${pid}\n`)
  } catch {
    // The home is gone (the agent destroyed meanwhile): nothing to record.
  }
}

const forgetPid = (home: string, pid: number | undefined) => {
  try {
    if (FsSync.readFileSync(pidFile(home), "utf8").trim() === String(pid)) FsSync.rmSync(pidFile(home), { force: true })
  } catch {
    // No file, or the home is gone.
  }
}

export const spawnGateway = (options: SpawnOptions): Gateway => {
  const tail = new LogTail()
  const launch = options.sandbox.launch({
    home: options.home,
    cwd: options.home,
    argv: [options.nodePath, "--import", parentWatch, options.entryFile, "gateway", "run", "--port", String(options.port), "--bind", "loopback"],
    env: { ...options.env, CAIRN_GATEWAY_STOP_GRACE_MS: String(options.stopGraceMs) },
    dieWithParent: false,
    gracefulTerm: true
  })
  // stdin is the parent watch's pipe: it closes when Cairn goes away. Detached: its own process group, so a stop
  // reaches the gateway's workers too.
  const child = spawnLaunch(launch, "pipe")
  child.stdin!.on("error", () => {}) // a gateway that exits closes its end; nothing to report
  child.stdout!.on("data", (chunk: Buffer) => tail.push(chunk))
  child.stderr!.on("data", (chunk: Buffer) => tail.push(chunk))
  const exited = new Promise<string>((resolve) => {
    child.on("error", (error) => {
      tail.push(`spawn failed: ${error.message}\n`)
      resolve("spawn error")
    })
    child.on("exit", (code, signal) => resolve(signal ?? `exit code ${code}`))
  })
  if (child.pid !== undefined) recordPid(options.home, child.pid)
  void exited.then(() => forgetPid(options.home, child.pid))
  return { child, tail, exited, stopping: false }
}

const isAlive = (gateway: Gateway) => gateway.child.exitCode === null && gateway.child.signalCode === null

/** Signals a process's whole group, or only the process when the group cannot be reached. */
const signalPidGroup = (pid: number, signal: NodeJS.Signals) => {
  try {
    process.kill(-pid, signal)
  } catch {
    try {
      process.kill(pid, signal)
    } catch {
      // Already gone.
    }
  }
}

/** Signals the gateway's whole process group (by default only while its main process lives). */
export const signalGroup = (gateway: Gateway, signal: NodeJS.Signals, evenAfterExit = false) => {
  const pid = gateway.child.pid
  if (pid === undefined || (!evenAfterExit && !isAlive(gateway))) return
  signalPidGroup(pid, signal)
}

/** SIGTERM to the process group, SIGKILL after the grace period; resolves once the main process is gone. */
export const terminate = async (gateway: Gateway, graceMs: number) => {
  gateway.stopping = true
  signalGroup(gateway, "SIGTERM")
  const exitedInTime = await Promise.race([gateway.exited.then(() => true), sleep(graceMs).then(() => false)])
  if (!exitedInTime) signalGroup(gateway, "SIGKILL")
  await gateway.exited
  // The workers share the group; make sure none outlives the gateway.
  signalGroup(gateway, "SIGKILL", true)
}

/** Whether anything answers HTTP on the port: used to wait for readiness and to refuse a port already taken. */
export const probeReady = async (port: number): Promise<"ready" | "answering" | "silent"> => {
  try {
    const response = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(2_000) })
    await response.body?.cancel()
    return response.status === 200 ? "ready" : "answering"
  } catch {
    return "silent"
  }
}

/** Whether a process `pid` exists (signal 0; EPERM: it does, someone else's). */
export const processExists = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

/**
 * Stops a gateway an earlier Cairn process started from this home and left running (it was killed before it could
 * stop it, and the gateway's parent watch has not finished yet). Linux only: elsewhere the pid cannot be checked to
 * still be an OpenClaw process, and the parent watch alone has to do.
 */
export const reapStale = async (home: string, graceMs: number): Promise<void> => {
  const text = await Fs.readFile(pidFile(home), "utf8").catch(() => undefined)
  const pid = Number(text?.trim())
  if (!Number.isSafeInteger(pid) || pid <= 1) return
  const cmdline = await Fs.readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => "")
  // A reused pid belongs to something else: leave it alone.
  if (!cmdline.includes("openclaw")) return
  signalPidGroup(pid, "SIGTERM")
  const deadline = Date.now() + graceMs
  while (processExists(pid) && Date.now() < deadline) await sleep(100)
  signalPidGroup(pid, "SIGKILL")
  while (processExists(pid)) await sleep(50)
  await Fs.rm(pidFile(home), { force: true })
}
