/**
 * The simulated engine's scheduler of one agent: its jobs and their runs, as OpenClaw's cron keeps them (2026.9.6,
 * observed). A fresh agent has OpenClaw's three jobs of its own, marked `system`. Jobs are listed by their next run,
 * computed as OpenClaw computes it (croner for cron expressions, in UTC unless a time zone is given; `every` counted
 * from the job's creation; `at` while in the future). A run is recorded at once: without a model configured (and a
 * simulated agent never has one), a run that needs the agent's model fails as OpenClaw's does, a system event is
 * delivered. Nothing here reads a clock or runs on a timer: callers pass the time.
 */
import { Cron } from "croner"
import type { Task, TaskPatch, TaskRun, TaskSpec } from "../WorkspaceOperations.ts"

/** What OpenClaw answers for a run that needs a model when none has a credential. */
export const noModelError = "No route-compatible authentication source is configured for openai."

interface Job {
  readonly id: string
  readonly createdAtMs: number
  name: string
  description: string | undefined
  enabled: boolean
  schedule: Task["schedule"]
  sessionTarget: string | undefined
  wakeMode: string | undefined
  payload: Task["payload"]
  delivery: Task["delivery"]
  readonly system: boolean
  lastRunAtMs: number | undefined
  lastStatus: string | undefined
}

interface Run {
  readonly run: TaskRun
  readonly sequence: number
}

/** Why the scheduler refused a job (OpenClaw's own words where it has them). */
export class Refused {
  readonly _tag = "Refused"
  readonly detail: string
  constructor(detail: string) {
    this.detail = detail
  }
}

export interface CronStore {
  readonly list: (nowMs: number, includeDisabled: boolean) => ReadonlyArray<Task>
  /** The job, or undefined when there is none of that id. */
  readonly get: (id: string, nowMs: number) => Task | undefined
  readonly add: (spec: TaskSpec, nowMs: number) => Task | Refused
  /** `protected` for a system job given anything but `enabled`. */
  readonly update: (id: string, patch: TaskPatch, nowMs: number) => Task | Refused | "missing" | "protected"
  readonly remove: (id: string) => "removed" | "missing" | "protected"
  readonly run: (id: string, nowMs: number) => { readonly runId: string } | "missing"
  readonly runs: (id: string, limit: number) => ReadonlyArray<TaskRun> | "missing"
}

/** A job's next run after `nowMs`, as OpenClaw computes it; undefined when it has none. */
export const nextRunAtMs = (schedule: Task["schedule"], createdAtMs: number, nowMs: number): number | undefined => {
  switch (schedule.kind) {
    case "at": {
      const at = Date.parse(String(schedule["at"]))
      return Number.isNaN(at) || at <= nowMs ? undefined : at
    }
    case "every": {
      const everyMs = Math.floor(Number(schedule["everyMs"]))
      if (!Number.isFinite(everyMs) || everyMs < 1) return undefined
      if (nowMs < createdAtMs) return createdAtMs
      return createdAtMs + (Math.floor((nowMs - createdAtMs) / everyMs) + 1) * everyMs
    }
    case "cron": {
      const tz = schedule["tz"]
      const next = cronOf(String(schedule["expr"]), typeof tz === "string" ? tz : undefined).nextRun(new Date(nowMs))
      return next === null ? undefined : next.getTime()
    }
    default:
      return undefined
  }
}

/** A parsed cron expression (never started: croner schedules nothing without a function). */
const cronOf = (expr: string, tz: string | undefined) => new Cron(expr, { timezone: tz ?? "UTC", catch: false })

/** Why OpenClaw would refuse a schedule, or undefined for one it takes. */
export const scheduleProblem = (schedule: Task["schedule"], nowMs: number): string | undefined => {
  try {
    if (schedule.kind === "cron") nextRunAtMs(schedule, nowMs, nowMs)
    if (schedule.kind === "at" && Number.isNaN(Date.parse(String(schedule["at"])))) return `Invalid at: ${String(schedule["at"])}`
    return undefined
  } catch (error) {
    return error instanceof Error ? error.message : String(error)
  }
}

/** A stored `at` time the way OpenClaw keeps it (ISO 8601 with milliseconds, UTC). */
const normalizeSchedule = (schedule: Task["schedule"]): Task["schedule"] =>
  schedule.kind === "at" ? { ...schedule, at: new Date(Date.parse(String(schedule["at"]))).toISOString() } : schedule

const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString())

const toTask = (job: Job, nowMs: number): Task => {
  const next = job.enabled ? nextRunAtMs(job.schedule, job.createdAtMs, nowMs) : undefined
  const state: { nextRunAt?: string; lastRunAt?: string; lastStatus?: string } = {}
  if (next !== undefined) state.nextRunAt = iso(next)!
  if (job.lastRunAtMs !== undefined) state.lastRunAt = iso(job.lastRunAtMs)!
  if (job.lastStatus !== undefined) state.lastStatus = job.lastStatus
  return {
    id: job.id,
    name: job.name,
    ...(job.description === undefined ? {} : { description: job.description }),
    enabled: job.enabled,
    schedule: job.schedule,
    ...(job.sessionTarget === undefined ? {} : { sessionTarget: job.sessionTarget }),
    ...(job.wakeMode === undefined ? {} : { wakeMode: job.wakeMode }),
    payload: job.payload,
    ...(job.delivery === undefined ? {} : { delivery: job.delivery }),
    system: job.system,
    state
  }
}

/** OpenClaw's own jobs on a fresh agent (their texts shortened). */
const systemJobs = (newId: () => string, nowMs: number): ReadonlyArray<Job> => [
  {
    id: newId(),
    createdAtMs: nowMs,
    name: "heartbeat-main",
    description: undefined,
    enabled: true,
    schedule: { kind: "every", everyMs: 30 * 60_000 },
    sessionTarget: "main",
    wakeMode: "next-heartbeat",
    payload: { kind: "heartbeat" },
    delivery: undefined,
    system: true,
    lastRunAtMs: undefined,
    lastStatus: undefined
  },
  {
    id: newId(),
    createdAtMs: nowMs,
    name: "Memory Dreaming Promotion",
    description: "[managed-by=memory-core.short-term-promotion] Promote weighted short-term recalls into MEMORY.md.",
    enabled: true,
    schedule: { kind: "cron", expr: "0 3 * * *" },
    sessionTarget: "isolated",
    wakeMode: "now",
    payload: { kind: "agentTurn", text: "__openclaw_memory_core_short_term_promotion_dream__" },
    delivery: { mode: "none" },
    system: true,
    lastRunAtMs: undefined,
    lastStatus: undefined
  },
  {
    id: newId(),
    createdAtMs: nowMs,
    name: "skill-collection-review-main",
    description: undefined,
    enabled: true,
    schedule: { kind: "every", everyMs: 7 * 24 * 60 * 60_000 },
    sessionTarget: "isolated",
    wakeMode: "next-heartbeat",
    payload: { kind: "agentTurn", text: "Review this agent's Skill Workshop as a collection." },
    delivery: { mode: "none" },
    system: true,
    lastRunAtMs: undefined,
    lastStatus: undefined
  }
]

/**
 * The session a payload kind runs in when none is named: OpenClaw delivers a system event into the main session
 * and runs an agent turn in a session of its own (and refuses the other combinations).
 */
const defaultSessionTarget = (kind: string) => (kind === "systemEvent" ? "main" : "isolated")

/** What a run of `payload` comes to on an agent without a model: a system event is delivered, anything else fails. */
const outcome = (payload: Task["payload"]): Pick<TaskRun, "status" | "summary" | "error"> =>
  payload.kind === "systemEvent"
    ? { status: "ok", summary: String(payload["message"]) }
    : { status: "error", error: noModelError }

/**
 * A new agent's scheduler, holding OpenClaw's system jobs. `newId` gives job ids (UUID-shaped; unique across the
 * engine's agents).
 */
export const make = (newId: () => string, nowMs: number): CronStore => {
  const jobs = new Map<string, Job>(systemJobs(newId, nowMs).map((job) => [job.id, job]))
  const runs = new Map<string, Array<Run>>()
  let runSequence = 0

  const sorted = (nowMs: number) =>
    [...jobs.values()]
      .map((job, order) => ({ task: toTask(job, nowMs), order }))
      .sort((a, b) => {
        const an = a.task.state.nextRunAt
        const bn = b.task.state.nextRunAt
        if (an !== bn) return an === undefined ? 1 : bn === undefined ? -1 : an < bn ? -1 : 1
        return a.order - b.order
      })
      .map(({ task }) => task)

  return {
    list: (nowMs, includeDisabled) => sorted(nowMs).filter((task) => includeDisabled || task.enabled),
    get: (id, nowMs) => {
      const job = jobs.get(id)
      return job === undefined ? undefined : toTask(job, nowMs)
    },
    add: (spec, nowMs) => {
      const problem = scheduleProblem(spec.schedule, nowMs)
      if (problem !== undefined) return new Refused(`invalid cron.add params: ${problem}`)
      const job: Job = {
        id: newId(),
        createdAtMs: nowMs,
        name: spec.name,
        description: spec.description,
        enabled: spec.enabled ?? true,
        schedule: normalizeSchedule(spec.schedule),
        sessionTarget: spec.sessionTarget ?? defaultSessionTarget(spec.payload.kind),
        wakeMode: spec.wakeMode ?? "now",
        payload: spec.payload,
        // Cairn asks for no delivery unless told: OpenClaw would announce into a channel the agent may not have.
        delivery: spec.delivery ?? { mode: "none" },
        system: false,
        lastRunAtMs: undefined,
        lastStatus: undefined
      }
      jobs.set(job.id, job)
      return toTask(job, nowMs)
    },
    update: (id, patch, nowMs) => {
      const job = jobs.get(id)
      if (job === undefined) return "missing"
      const given = Object.entries(patch).filter(([, value]) => value !== undefined).map(([key]) => key)
      if (job.system && given.some((key) => key !== "enabled")) return "protected"
      if (patch.schedule !== undefined) {
        const problem = scheduleProblem(patch.schedule, nowMs)
        if (problem !== undefined) return new Refused(`invalid cron.update params: ${problem}`)
        job.schedule = normalizeSchedule(patch.schedule)
      }
      if (patch.name !== undefined) job.name = patch.name
      if (patch.description !== undefined) job.description = patch.description
      if (patch.enabled !== undefined) job.enabled = patch.enabled
      if (patch.payload !== undefined) {
        // A payload of another kind moves to the session that kind runs in, unless the patch names one.
        if (job.sessionTarget !== undefined && (job.sessionTarget === "main") !== (patch.payload.kind === "systemEvent")) {
          job.sessionTarget = defaultSessionTarget(patch.payload.kind)
        }
        job.payload = patch.payload
      }
      if (patch.sessionTarget !== undefined) job.sessionTarget = patch.sessionTarget
      if (patch.wakeMode !== undefined) job.wakeMode = patch.wakeMode
      if (patch.delivery !== undefined) job.delivery = patch.delivery
      return toTask(job, nowMs)
    },
    remove: (id) => {
      const job = jobs.get(id)
      if (job === undefined) return "missing"
      if (job.system) return "protected"
      jobs.delete(id)
      runs.delete(id)
      return "removed"
    },
    run: (id, nowMs) => {
      const job = jobs.get(id)
      if (job === undefined) return "missing"
      const sequence = ++runSequence
      const runId = `manual:${id}:${nowMs}:${sequence}`
      const result = outcome(job.payload)
      const startedAt = iso(nowMs)!
      const run: TaskRun = { runId, ...result, startedAt, finishedAt: startedAt, durationMs: 0 }
      runs.set(id, [...(runs.get(id) ?? []), { run, sequence }])
      job.lastRunAtMs = nowMs
      job.lastStatus = result.status
      return { runId }
    },
    runs: (id, limit) => {
      if (!jobs.has(id)) return "missing"
      return [...(runs.get(id) ?? [])]
        .sort((a, b) => b.sequence - a.sequence)
        .slice(0, Math.max(0, limit))
        .map(({ run }) => run)
    }
  }
}
