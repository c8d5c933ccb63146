/**
 * Scheduled tasks on OpenClaw's own cron (reference features §5), through the gateway's `cron.*` RPC methods: the
 * mapping between the port's TaskSpec/TaskPatch/Task/TaskRun and OpenClaw's jobs and run log, and the operations
 * themselves, given a `call` that sends one request on the agent's kept-open connection (OpenClawAgentEngine's
 * `rpc`). Jobs live in the gateway's state database, so they survive its restarts; every operation needs it running.
 *
 * What OpenClaw 2026.9 does that shapes this module (read in its `dist/cron-*.mjs`, `service-*.mjs`, `src-*.mjs`):
 * - `cron.add` wants `sessionTarget` and `wakeMode`; a `main` session takes only `systemEvent` payloads and
 *   `isolated` only `agentTurn` (or command/script), so the default target follows the payload's kind. Without a
 *   `delivery` it would announce an isolated run's result to the last channel: the default here is `{mode:"none"}`.
 * - An agent turn's text is `payload.message`, a system event's `payload.text` (the port's `text` and `message`).
 * - `cron.list` pages (at most 200 a page, `hasMore`/`nextOffset`); `includeDisabled:false` lists enabled jobs only.
 * - An unknown id is refused with `details.code` `CRON_JOB_NOT_FOUND`; `cron.runs` lists finished runs only, newest
 *   first, each with `status` `ok`/`error`/`skipped`.
 * - The engine's own jobs: the heartbeat (`payload.kind` `heartbeat`, declaration key `heartbeat:<agent>`), the
 *   skill collection review (`skill-collection-review:<agent>`) and plugin-managed ones such as memory-core's
 *   "Memory Dreaming Promotion" (declaration key `memory-core:…`, description tagged `[managed-by=…]`). OpenClaw
 *   refuses any edit or removal of the first two ("system-owned monitor jobs cannot be edited by cron clients"),
 *   toggles included, and its plugins converge theirs back at startup; this module refuses what the port refuses
 *   (SystemTaskProtected) before asking, and that refusal of a toggle too; other refusals are TasksFailed.
 */
import {
  SystemTaskProtected,
  type Task,
  type TaskDelivery,
  TaskNotFound,
  type TaskPatch,
  type TaskPayload,
  type TaskRun,
  TasksFailed,
  type TaskSchedule,
  type TaskSpec
} from "@cairn/agent-engine"
import { Effect } from "effect"
import type { GatewayRpcError } from "./GatewayRpc.ts"

/** Sends one RPC request to the agent's gateway and gives its payload. */
export type Call = (method: string, params: unknown) => Effect.Effect<unknown, GatewayRpcError>

type Json = Readonly<Record<string, unknown>>

const isRecord = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value)
const stringAt = (record: Json, key: string) => (typeof record[key] === "string" ? record[key] : undefined)
const numberAt = (record: Json, key: string) =>
  typeof record[key] === "number" && Number.isFinite(record[key]) ? record[key] : undefined
const isoAt = (record: Json, key: string) => {
  const ms = numberAt(record, key)
  return ms === undefined ? undefined : new Date(ms).toISOString()
}
/** `{key: value}` when the value is defined, `{}` otherwise: for optional fields under exactOptionalPropertyTypes. */
const field = <K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } =>
  (value === undefined ? {} : { [key]: value }) as { [P in K]?: V }

/** Declaration-key namespaces OpenClaw reserves for itself: no client may create a job in them. */
const reservedNamespaces = ["heartbeat:", "heartbeat-task:", "skill-collection-review:"]
/** The tag OpenClaw's plugins put in the description of the jobs they manage (and find them by). */
const managedTag = "[managed-by="

/**
 * Whether a job is the engine's own. A heartbeat payload or a reserved declaration key is proof: clients cannot
 * create either. A plugin's job is known by its declaration key together with its managed-by tag; Cairn never sends
 * a declaration key, so no task created through Cairn can pass for one.
 */
export const isSystemJob = (job: Json): boolean => {
  const payload = job["payload"]
  if (isRecord(payload) && payload["kind"] === "heartbeat") return true
  const declarationKey = stringAt(job, "declarationKey")
  if (declarationKey === undefined) return false
  if (reservedNamespaces.some((prefix) => declarationKey.startsWith(prefix))) return true
  return stringAt(job, "description")?.includes(managedTag) === true
}

const scheduleToCron = (schedule: TaskSchedule): Json => {
  switch (schedule.kind) {
    case "cron":
      return { kind: "cron", expr: schedule.expr, ...field("tz", schedule.tz) }
    case "every":
      // OpenClaw's `every` has no stagger (it drops one it is given); passed on as given all the same.
      return { kind: "every", everyMs: schedule.everyMs, ...field("staggerMs", schedule.staggerMs) }
    case "at":
      return { kind: "at", at: schedule.at }
  }
}

const payloadToCron = (payload: TaskPayload): Json =>
  payload.kind === "agentTurn"
    ? {
      kind: "agentTurn",
      message: payload.text,
      ...field("model", payload.model),
      ...field("thinking", payload.thinking),
      ...field("timeoutSeconds", payload.timeoutSeconds)
    }
    : { kind: "systemEvent", text: payload.message }

/** A payload patch replaces the whole payload: optional settings it leaves out are cleared (`null`). */
const payloadPatchToCron = (payload: TaskPayload): Json =>
  payload.kind === "agentTurn"
    ? {
      kind: "agentTurn",
      message: payload.text,
      model: payload.model ?? null,
      thinking: payload.thinking ?? null,
      timeoutSeconds: payload.timeoutSeconds ?? null
    }
    : { kind: "systemEvent", text: payload.message }

const deliveryToCron = (delivery: TaskDelivery): Json => ({
  mode: delivery.mode,
  ...field("channel", delivery.channel),
  ...field("to", delivery.to),
  ...field("bestEffort", delivery.bestEffort)
})

/** OpenClaw merges a delivery patch into the stored one: what the port leaves out is cleared so that it replaces. */
const deliveryPatchToCron = (delivery: TaskDelivery): Json => ({
  mode: delivery.mode,
  channel: delivery.channel ?? null,
  to: delivery.to ?? null,
  ...field("bestEffort", delivery.bestEffort)
})

/** The session a payload kind can run in when none is asked for: OpenClaw refuses the other combinations. */
const defaultSessionTarget = (kind: string) => (kind === "systemEvent" ? "main" : "isolated")
const fitsSession = (target: string, kind: string) => (target === "main") === (kind === "systemEvent")

/** `cron.add`'s params for a task as users create it. */
export const addParams = (spec: TaskSpec): Json => ({
  name: spec.name,
  ...field("description", spec.description),
  enabled: spec.enabled ?? true,
  schedule: scheduleToCron(spec.schedule),
  sessionTarget: spec.sessionTarget ?? defaultSessionTarget(spec.payload.kind),
  wakeMode: spec.wakeMode ?? "now",
  payload: payloadToCron(spec.payload),
  delivery: deliveryToCron(spec.delivery ?? { mode: "none" })
})

/**
 * `cron.update`'s patch for a change to a task stored as `current`. A new payload of another kind moves the job to
 * the session that kind runs in, unless the change names one.
 */
export const updatePatch = (patch: TaskPatch, current: Task): Json => {
  const sessionTarget = patch.sessionTarget ??
    (patch.payload !== undefined && !fitsSession(current.sessionTarget ?? "", patch.payload.kind)
      ? defaultSessionTarget(patch.payload.kind)
      : undefined)
  return {
    ...field("name", patch.name),
    ...field("description", patch.description),
    ...field("enabled", patch.enabled),
    ...field("schedule", patch.schedule === undefined ? undefined : scheduleToCron(patch.schedule)),
    ...field("sessionTarget", sessionTarget),
    ...field("wakeMode", patch.wakeMode),
    ...field("payload", patch.payload === undefined ? undefined : payloadPatchToCron(patch.payload)),
    ...field("delivery", patch.delivery === undefined ? undefined : deliveryPatchToCron(patch.delivery))
  }
}

const payloadFromCron = (payload: Json): Task["payload"] => {
  switch (payload["kind"]) {
    case "agentTurn":
      return {
        kind: "agentTurn",
        text: stringAt(payload, "message") ?? "",
        ...field("model", stringAt(payload, "model")),
        ...field("thinking", stringAt(payload, "thinking")),
        ...field("timeoutSeconds", numberAt(payload, "timeoutSeconds"))
      }
    case "systemEvent":
      return { kind: "systemEvent", message: stringAt(payload, "text") ?? "" }
    default:
      // The engine's own kinds (heartbeat, command, script) as OpenClaw shows them.
      return { ...payload, kind: String(payload["kind"]) }
  }
}

const deliveryModes: ReadonlyArray<TaskDelivery["mode"]> = ["none", "announce", "webhook"]

const deliveryFromCron = (delivery: Json): TaskDelivery | undefined => {
  const mode = deliveryModes.find((known) => known === delivery["mode"])
  if (mode === undefined) return undefined
  return {
    mode,
    ...field("channel", stringAt(delivery, "channel")),
    ...field("to", stringAt(delivery, "to")),
    ...field("bestEffort", typeof delivery["bestEffort"] === "boolean" ? delivery["bestEffort"] : undefined)
  }
}

/** A job as `cron.list`, `cron.get`, `cron.add` and `cron.update` show it, as the port's Task; undefined if it is none. */
export const taskFromJob = (job: unknown): Task | undefined => {
  if (!isRecord(job)) return undefined
  const id = stringAt(job, "id")
  const name = stringAt(job, "name")
  const { schedule, payload } = job
  if (
    id === undefined || name === undefined || typeof job["enabled"] !== "boolean" ||
    !isRecord(schedule) || typeof schedule["kind"] !== "string" || !isRecord(payload) || typeof payload["kind"] !== "string"
  ) return undefined
  const state = isRecord(job["state"]) ? job["state"] : {}
  const delivery = isRecord(job["delivery"]) ? deliveryFromCron(job["delivery"]) : undefined
  return {
    id,
    name,
    ...field("description", stringAt(job, "description")),
    enabled: job["enabled"],
    schedule: { ...schedule, kind: schedule["kind"] },
    ...field("sessionTarget", stringAt(job, "sessionTarget")),
    ...field("wakeMode", stringAt(job, "wakeMode")),
    payload: payloadFromCron(payload),
    ...field("delivery", delivery),
    system: isSystemJob(job),
    state: {
      ...field("nextRunAt", isoAt(state, "nextRunAtMs")),
      ...field("lastRunAt", isoAt(state, "lastRunAtMs")),
      ...field("lastStatus", stringAt(state, "lastRunStatus") ?? stringAt(state, "lastStatus"))
    }
  }
}

/** One entry of `cron.runs` as the port's TaskRun: `runAtMs` is when it started, `ts` when it finished. */
export const runFromEntry = (entry: unknown): TaskRun | undefined => {
  if (!isRecord(entry)) return undefined
  const status = stringAt(entry, "status") ?? stringAt(entry, "completionStatus") ?? stringAt(entry, "action")
  if (status === undefined) return undefined
  return {
    ...field("runId", stringAt(entry, "runId")),
    status,
    ...field("startedAt", isoAt(entry, "runAtMs")),
    ...field("finishedAt", isoAt(entry, "ts")),
    ...field("durationMs", numberAt(entry, "durationMs")),
    ...field("summary", stringAt(entry, "summary")),
    ...field("error", stringAt(entry, "error"))
  }
}

/** The error details code OpenClaw gives for an id it does not know. */
const notFoundCode = "CRON_JOB_NOT_FOUND"
const isNotFound = (error: GatewayRpcError) => isRecord(error.details) && error.details["code"] === notFoundCode

/** cron.list's page size; OpenClaw's maximum. */
const pageSize = 200
/** How many pages `list` reads before it takes the list for one that never ends. */
const maxPages = 50

/** The operations on one agent's tasks, over `call`. */
export const make = (agentId: string, call: Call) => {
  const failed = (detail: string) => new TasksFailed({ agentId, detail })
  const unexpected = (method: string, answer: unknown) =>
    failed(`unexpected answer to ${method}: ${JSON.stringify(answer)?.slice(0, 500)}`)

  /** Calls a method; the engine's refusals and an unreachable gateway become TasksFailed with its message. */
  const request = (method: string, params: unknown) =>
    call(method, params).pipe(Effect.mapError((error) => failed(error.message)))

  /** Calls a method about one task: an unknown id is TaskNotFound. */
  const requestAbout = (taskId: string, method: string, params: unknown) =>
    call(method, params).pipe(
      Effect.mapError((error) => (isNotFound(error) ? new TaskNotFound({ agentId, taskId }) : failed(error.message)))
    )

  const toTask = (method: string) => (answer: unknown) => {
    const task = taskFromJob(answer)
    return task === undefined ? Effect.fail(unexpected(method, answer)) : Effect.succeed(task)
  }

  /** An id OpenClaw could never have given (it refuses empty ids, and run logs refuse path separators). */
  const impossibleId = (taskId: string) => taskId.trim().length === 0 || /[/\\]/.test(taskId)

  const get = (taskId: string): Effect.Effect<Task, TaskNotFound | TasksFailed> =>
    impossibleId(taskId)
      ? Effect.fail(new TaskNotFound({ agentId, taskId }))
      : requestAbout(taskId, "cron.get", { id: taskId }).pipe(Effect.flatMap(toTask("cron.get")))

  const list = (includeDisabled: boolean): Effect.Effect<ReadonlyArray<Task>, TasksFailed> =>
    Effect.gen(function*() {
      const tasks: Array<Task> = []
      let offset = 0
      for (let page = 0; page < maxPages; page++) {
        const answer = yield* request("cron.list", { includeDisabled, limit: pageSize, offset, includeDeliveryPreviews: false })
        if (!isRecord(answer) || !Array.isArray(answer["jobs"])) return yield* unexpected("cron.list", answer)
        for (const job of answer["jobs"]) {
          const task = taskFromJob(job)
          if (task === undefined) return yield* unexpected("cron.list", job)
          tasks.push(task)
        }
        const nextOffset = numberAt(answer, "nextOffset")
        if (answer["hasMore"] !== true || nextOffset === undefined || nextOffset <= offset) return tasks
        offset = nextOffset
      }
      return yield* failed(`cron.list gave more than ${maxPages} pages`)
    })

  const add = (spec: TaskSpec): Effect.Effect<Task, TasksFailed> =>
    request("cron.add", addParams(spec)).pipe(
      // A declaration key would answer `{created, job}`; Cairn sends none, but reads both.
      Effect.flatMap((answer) => toTask("cron.add")(isRecord(answer) && isRecord(answer["job"]) ? answer["job"] : answer))
    )

  const update = (taskId: string, patch: TaskPatch): Effect.Effect<Task, TaskNotFound | SystemTaskProtected | TasksFailed> =>
    Effect.gen(function*() {
      const current = yield* get(taskId)
      const changes = Object.entries(patch).filter(([, value]) => value !== undefined).map(([key]) => key)
      if (current.system && changes.some((key) => key !== "enabled")) {
        return yield* new SystemTaskProtected({ agentId, taskId })
      }
      const cronPatch = updatePatch(patch, current)
      if (Object.keys(cronPatch).length === 0) return current
      return yield* requestAbout(taskId, "cron.update", { id: taskId, patch: cronPatch }).pipe(
        // OpenClaw refuses to toggle its monitor jobs (the heartbeat, the skill review): refused as the port refuses.
        Effect.catchTag("TasksFailed", (error): Effect.Effect<never, TasksFailed | SystemTaskProtected> =>
          current.system && /system-owned/i.test(error.detail)
            ? Effect.fail(new SystemTaskProtected({ agentId, taskId }))
            : Effect.fail(error)),
        Effect.flatMap(toTask("cron.update"))
      )
    })

  const remove = (taskId: string): Effect.Effect<void, TaskNotFound | SystemTaskProtected | TasksFailed> =>
    Effect.gen(function*() {
      const current = yield* get(taskId)
      if (current.system) return yield* new SystemTaskProtected({ agentId, taskId })
      const answer = yield* requestAbout(taskId, "cron.remove", { id: taskId })
      // Removed by someone else between the two calls.
      if (isRecord(answer) && answer["removed"] === false) return yield* new TaskNotFound({ agentId, taskId })
    })

  const run = (taskId: string): Effect.Effect<{ readonly runId: string }, TaskNotFound | TasksFailed> =>
    impossibleId(taskId)
      ? Effect.fail(new TaskNotFound({ agentId, taskId }))
      : requestAbout(taskId, "cron.run", { id: taskId, mode: "force" }).pipe(
        Effect.flatMap((answer) => {
          const runId = isRecord(answer) ? stringAt(answer, "runId") : undefined
          if (runId !== undefined) return Effect.succeed({ runId })
          const reason = isRecord(answer) ? stringAt(answer, "reason") : undefined
          return Effect.fail(reason === undefined ? unexpected("cron.run", answer) : failed(`the run was not queued: ${reason}`))
        })
      )

  /** At most 200 runs (the engine's page); a limit under 1 still tells an unknown task apart, and lists none. */
  const runs = (taskId: string, limit: number): Effect.Effect<ReadonlyArray<TaskRun>, TaskNotFound | TasksFailed> =>
    impossibleId(taskId)
      ? Effect.fail(new TaskNotFound({ agentId, taskId }))
      : requestAbout(taskId, "cron.runs", {
        id: taskId,
        limit: Math.max(1, Math.min(pageSize, Math.floor(limit) || 1)),
        sortDir: "desc"
      }).pipe(
        Effect.flatMap((answer) => {
          if (!isRecord(answer) || !Array.isArray(answer["entries"])) return Effect.fail(unexpected("cron.runs", answer))
          const entries = answer["entries"].map(runFromEntry)
          if (!entries.every((entry) => entry !== undefined)) return Effect.fail(unexpected("cron.runs", answer))
          return Effect.succeed(limit < 1 ? [] : entries as ReadonlyArray<TaskRun>)
        })
      )

  return { list, get, add, update, remove, run, runs } as const
}
