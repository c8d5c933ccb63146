/**
 * One gateway process: spawned in the agent's sandbox (Sandbox.ts) and its own session and process group (it forks
 * workers of its own) with a parent watch preloaded (parent-watch.mjs), its output kept as a tail for error reports,
 * and stopped with SIGTERM, then SIGKILL. In a sandbox, the gateway's PID namespace ends with it: no worker outlives
 * it, even one that left the process group.
 *
 * Cairn knows the process by its child handle while it runs. So that a later Cairn can reap a gateway an earlier one
 * left behind (killed before it could stop it), the pid of the process Cairn spawned (bubblewrap's, whose group holds
 * the gateway) and its start time (field 22 of /proc/<pid>/stat, in clock ticks since boot) are recorded at spawn in
 * Cairn's own folder for the agent (`<dataDir>/agents-meta/<agentId>/gateway.pid`, which no sandbox shows). The stale
 * sweep kills a process only when its pid, start time, process group and session all still match that record: a
 * reused pid, or any pid the agent wrote anywhere, is never signalled. Nothing is read from the agent's home.
 */
import { connectionThrough } from "@cairn/agent-engine"
import type { ChildProcess } from "node:child_process"
import * as FsSync from "node:fs"
import * as Fs from "node:fs/promises"
import * as Http from "node:http"
import * as Path from "node:path"
import { pathToFileURL } from "node:url"
import { sleep } from "./Command.ts"
import type { Duplex } from "node:stream"
import type { Network } from "./AgentNetwork.ts"
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
  /** The agent's network it runs in (AgentNetwork.ts); undefined where agents share the host's. */
  readonly network: Network | undefined
}

export interface SpawnOptions {
  readonly nodePath: string
  readonly entryFile: string
  readonly home: string
  /** Cairn's own folder for the agent, where the pid record goes (AgentHome.metaDirOf). */
  readonly metaDir: string
  readonly port: number
  readonly env: NodeJS.ProcessEnv
  /** How long the parent watch lets the gateway shut down once Cairn is gone. */
  readonly stopGraceMs: number
  /** Where it runs; throws SandboxUnavailable when no sandbox can run and SANDBOX is not `off`. */
  readonly sandbox: Sandbox
  /** The agent's network to run in (Sandbox.createNetwork), where agents have their own. */
  readonly network?: Network
}

/** Where the record of a gateway's pid is kept while it runs: Cairn's folder for the agent, never the home. */
export const pidFile = (metaDir: string) => Path.join(metaDir, "gateway.pid")

/** What Cairn records of a process it spawned: enough to tell it from any later process given the same pid. */
export interface PidRecord {
  readonly pid: number
  /** Field 22 of /proc/<pid>/stat: when the process started, in clock ticks since boot. */
  readonly startTime: string
}

/** The start time, process group and session of a live process (Linux: /proc/<pid>/stat), or undefined. */
export const processIdentity = (pid: number): { readonly startTime: string; readonly pgrp: number; readonly session: number } | undefined => {
  try {
    const stat = FsSync.readFileSync(`/proc/${pid}/stat`, "utf8")
    // The command name (field 2) is in parentheses and may hold spaces or parentheses: fields are counted after the last ")".
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    // fields[0] is field 3 (state): field n is fields[n - 3].
    return { startTime: fields[19]!, pgrp: Number(fields[2]), session: Number(fields[3]) }
  } catch {
    return undefined
  }
}

const parseRecord = (text: string | undefined): PidRecord | undefined => {
  try {
    const record: unknown = JSON.parse(text ?? "")
    if (typeof record !== "object" || record === null) return undefined
    const { pid, startTime } = record as Record<string, unknown>
    return typeof pid === "number" && Number.isSafeInteger(pid) && pid > 1 && typeof startTime === "string" && /^\d+$/.test(startTime)
      ? { pid, startTime }
      : undefined
  } catch {
    return undefined
  }
}

/** The record in Cairn's folder for the agent, if any. */
export const readPidRecord = (metaDir: string): PidRecord | undefined => {
  try {
    return parseRecord(FsSync.readFileSync(pidFile(metaDir), "utf8"))
  } catch {
    return undefined
  }
}

/*
 * The record is written and removed synchronously, and removed only while it still names this process: a restart
 * spawns the next gateway as soon as the last one exits, and an asynchronous removal for the old one could land after
 * the new one's write, leaving a running gateway no later Cairn could find.
 */
const recordPid = (metaDir: string, pid: number) => {
  const identity = processIdentity(pid)
  // Gone already (it failed at once), or no /proc: nothing a later Cairn could check, so nothing recorded.
  if (identity === undefined) return
  try {
    FsSync.mkdirSync(metaDir, { recursive: true, mode: 0o700 })
    const temporary = `${pidFile(metaDir)}.${process.pid}`
    FsSync.writeFileSync(temporary, JSON.stringify({ pid, startTime: identity.startTime } satisfies PidRecord) + "\n", { mode: 0o600 })
    FsSync.renameSync(temporary, pidFile(metaDir))
  } catch {
    // The agent destroyed meanwhile: nothing to record.
  }
}

const forgetPid = (metaDir: string, pid: number | undefined) => {
  if (readPidRecord(metaDir)?.pid === pid) FsSync.rmSync(pidFile(metaDir), { force: true })
}

export const spawnGateway = (options: SpawnOptions): Gateway => {
  const tail = new LogTail()
  const launch = options.sandbox.launch({
    home: options.home,
    cwd: options.home,
    argv: [options.nodePath, "--import", parentWatch, options.entryFile, "gateway", "run", "--port", String(options.port), "--bind", "loopback"],
    env: { ...options.env, CAIRN_GATEWAY_STOP_GRACE_MS: String(options.stopGraceMs) },
    dieWithParent: false,
    gracefulTerm: true,
    ...(options.network === undefined ? {} : { network: { join: options.network } })
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
  if (child.pid !== undefined) recordPid(options.metaDir, child.pid)
  void exited.then(() => forgetPid(options.metaDir, child.pid))
  return { child, tail, exited, stopping: false, network: options.network }
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

/** Where Cairn reaches a gateway: a port on the host's loopback, or connections into its network (AgentNetwork.ts). */
export type Reach = { readonly port: number } | { readonly connect: () => Promise<Duplex> }

/** Whether anything answers HTTP there: used to wait for readiness and to refuse a port already taken. */
export const probeReady = (reach: Reach): Promise<"ready" | "answering" | "silent"> =>
  new Promise((resolve) => {
    const address = "connect" in reach ? { createConnection: connectionThrough(reach.connect) } : { host: "127.0.0.1", port: reach.port, agent: false }
    const request = Http.get({ ...address, path: "/readyz", timeout: 2_000 }, (response) => {
      response.resume()
      resolve(response.statusCode === 200 ? "ready" : "answering")
    })
    request.on("timeout", () => request.destroy(new Error("timeout")))
    request.on("error", () => resolve("silent"))
  })

/** Whether a process `pid` exists (signal 0; EPERM: it does, someone else's). */
export const processExists = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

/** Whether `record` still names the very process Cairn spawned: same start time, its own group and session leader. */
const isRecordedProcess = (record: PidRecord) => {
  const identity = processIdentity(record.pid)
  return identity !== undefined && identity.startTime === record.startTime && identity.pgrp === record.pid && identity.session === record.pid
}

/**
 * Stops a gateway an earlier Cairn process started for this agent and left running (it was killed before it could
 * stop it, and the gateway's parent watch has not finished yet), found by the record in Cairn's folder `metaDir` (see
 * the opening paragraph). Linux only: elsewhere no start time can be checked, and the parent watch alone has to do.
 */
export const reapStale = async (metaDir: string, graceMs: number): Promise<void> => {
  const record = readPidRecord(metaDir)
  if (record === undefined) return
  // A reused pid belongs to something else: leave it alone.
  if (isRecordedProcess(record)) {
    signalPidGroup(record.pid, "SIGTERM")
    const deadline = Date.now() + graceMs
    while (isRecordedProcess(record) && Date.now() < deadline) await sleep(100)
    if (isRecordedProcess(record)) signalPidGroup(record.pid, "SIGKILL")
    while (isRecordedProcess(record) && processExists(record.pid)) await sleep(50)
  }
  await Fs.rm(pidFile(metaDir), { force: true })
}
