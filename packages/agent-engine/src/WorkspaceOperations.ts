/**
 * The shapes of the workspace operations on the AgentEngine port: a console command and its result, the engine's
 * runtime config, and its scheduled tasks (the engine's cron). Engine-neutral: adapters map their engine's own
 * shapes onto these (OpenClaw stores an agent turn's text as `message`, for one).
 */
import type { ScheduledTask } from "@cairn/domain"

/** A shell command to run in the agent's workspace, as the agent, inside its sandbox. */
export interface ExecRequest {
  /** Run with `sh -c`; non-empty (callers check). */
  readonly command: string
  /**
   * The working directory: relative to the workspace, or absolute inside it; the workspace when absent. A directory
   * that resolves outside the workspace (symlinks followed) is refused with WorkingDirectoryOutside.
   */
  readonly cwd?: string
  /** The whole process group is killed after this long (`timedOut: true`). */
  readonly timeoutMs: number
  /** Each of stdout and stderr is kept up to this many bytes (`truncated: true` past it). */
  readonly maxOutputBytes: number
}

/**
 * How many leading bytes of capped output end on a character boundary: a multi-byte UTF-8 sequence the cap cut in
 * two is dropped rather than shown broken. Both adapters cut console output with it.
 */
export const completeUtf8Length = (bytes: Uint8Array) => {
  let start = bytes.length - 1
  // Back up over at most three continuation bytes to the last sequence's first byte.
  while (start >= 0 && bytes.length - start <= 4 && (bytes[start]! & 0xc0) === 0x80) start--
  if (start < 0) return bytes.length
  const lead = bytes[start]!
  const needed = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1
  return bytes.length - start >= needed ? bytes.length : start
}

export interface ExecResult {
  readonly stdout: string
  readonly stderr: string
  /** The shell's exit code; 128 + the signal's number for a command killed by a signal (137 after a timeout). */
  readonly exitCode: number
  readonly truncated: boolean
  readonly timedOut: boolean
  readonly durationMs: number
}

/** What reading one workspace file within a size cap found. */
export type WorkspaceRead =
  | { readonly _tag: "Found"; readonly content: Uint8Array }
  | { readonly _tag: "Missing" }
  | { readonly _tag: "TooLarge"; readonly size: number }

/** The engine's runtime config as JSON, and the hash a write must name to replace exactly this version. */
export interface EngineConfig {
  /** Credentials redacted as the engine redacts them (`RedactedMarker`). */
  readonly config: Readonly<Record<string, unknown>>
  readonly hash: string
}

/** The marker that stands in for a credential in a config read, and keeps the stored value when written back. */
export const RedactedMarker = "__OPENCLAW_REDACTED__"

/** One problem the engine's validator found: `path` is dotted (`gateway.port`), `<root>` for the whole document. */
export interface ConfigIssue {
  readonly path: string
  readonly message: string
}

export interface ConfigValidation {
  readonly valid: boolean
  readonly issues: ReadonlyArray<ConfigIssue>
  /** What the validator printed, for people. */
  readonly output: string
}

export interface ConfigWrite {
  readonly config: Readonly<Record<string, unknown>>
  /** The hash of the version this write replaces; a different current version refuses it (ConfigChanged). */
  readonly baseHash?: string
}

/** The task shapes are the domain's (its rules check them before the engine is asked). */
export type TaskSchedule = ScheduledTask.Schedule
export type TaskPayload = ScheduledTask.Payload
export type TaskDelivery = ScheduledTask.Delivery
/** A task as users create it (callers have checked it: name, schedule and payload well-formed). */
export type TaskSpec = ScheduledTask.Spec

/** A change to a task: the fields given replace the stored ones. */
export type TaskPatch = ScheduledTask.Patch

/** A task as the engine holds it. */
export interface Task {
  readonly id: string
  readonly name: string
  readonly description?: string
  readonly enabled: boolean
  /** The engine's own schedule; one of TaskSchedule's kinds for every task users can create. */
  readonly schedule: { readonly kind: string } & Readonly<Record<string, unknown>>
  readonly sessionTarget?: string
  readonly wakeMode?: string
  /** One of TaskPayload's kinds, or the engine's own for its system jobs (a heartbeat). */
  readonly payload: { readonly kind: string } & Readonly<Record<string, unknown>>
  readonly delivery?: TaskDelivery
  /** A job of the engine's own (OpenClaw's heartbeat, memory and skill reviews): listed, never deleted. */
  readonly system: boolean
  readonly state: {
    readonly nextRunAt?: string
    readonly lastRunAt?: string
    readonly lastStatus?: string
  }
}

/** One run of a task, newest first in lists. */
export interface TaskRun {
  readonly runId?: string
  readonly status: string
  readonly startedAt?: string
  readonly finishedAt?: string
  readonly durationMs?: number
  readonly summary?: string
  readonly error?: string
}
