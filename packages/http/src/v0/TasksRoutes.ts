/**
 * An agent's scheduled tasks (the engine's cron): list (`?includeDisabled=`), create (201), get, change, delete, run
 * now, toggle (`{enabled}`) and recent runs (`?limit=`). A task is answered as the engine holds it, its own jobs
 * marked `system: true`. Bodies are read as text, so that one that is not JSON is `Invalid parameters` like any
 * other malformed task.
 */
import { AgentsAt, type Task, type TaskAt, Tasks, type TaskRun } from "@cairn/application"
import { Agent, ScheduledTask } from "@cairn/domain"
import { Effect, Schema } from "effect"
import { HttpRouter } from "effect/http"
import { atDescription } from "./At.ts"
import * as Kit from "./Kit.ts"

const { query } = Kit

const TasksQuery = Schema.Struct({ includeDisabled: Schema.optionalKey(Schema.Literals(["true", "false"])), at: Schema.optionalKey(Schema.String) })
const RunsQuery = Schema.Struct({ limit: Schema.optionalKey(Schema.String) })

/** A schedule or a payload: its `kind` and that kind's fields, as the engine's cron holds them. */
const Kinded = Schema.StructWithRest(Schema.Struct({ kind: Schema.String }), [Schema.Record(Schema.String, Schema.Unknown)])

/** A task as the engine holds it; the engine's own jobs are `system: true` (listed, never changed). */
const TaskWire = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  description: Schema.optionalKey(Schema.String),
  enabled: Schema.Boolean,
  schedule: Kinded,
  sessionTarget: Schema.optionalKey(Schema.String),
  wakeMode: Schema.optionalKey(Schema.String),
  payload: Kinded,
  delivery: Schema.optionalKey(Schema.Struct({
    mode: Schema.Literals(["none", "announce", "webhook"]),
    channel: Schema.optionalKey(Schema.String),
    to: Schema.optionalKey(Schema.String),
    bestEffort: Schema.optionalKey(Schema.Boolean)
  })),
  system: Schema.Boolean,
  state: Schema.Struct({
    nextRunAt: Schema.optionalKey(Schema.String),
    lastRunAt: Schema.optionalKey(Schema.String),
    lastStatus: Schema.optionalKey(Schema.String)
  })
})

/** Only the fields that are there: the wire has no `undefined`. */
const present = <K extends string, A>(key: K, value: A | undefined) => (value === undefined ? {} : { [key]: value } as { [P in K]: A })

const toWire = (task: Task): typeof TaskWire.Type => ({
  id: task.id,
  name: task.name,
  ...present("description", task.description),
  enabled: task.enabled,
  schedule: task.schedule,
  ...present("sessionTarget", task.sessionTarget),
  ...present("wakeMode", task.wakeMode),
  payload: task.payload,
  ...present(
    "delivery",
    task.delivery === undefined ? undefined : {
      mode: task.delivery.mode,
      ...present("channel", task.delivery.channel),
      ...present("to", task.delivery.to),
      ...present("bestEffort", task.delivery.bestEffort)
    }
  ),
  system: task.system,
  state: {
    ...present("nextRunAt", task.state.nextRunAt),
    ...present("lastRunAt", task.state.lastRunAt),
    ...present("lastStatus", task.state.lastStatus)
  }
})

/** One run of a task, newest first. */
const RunWire = Schema.Struct({
  runId: Schema.optionalKey(Schema.String),
  status: Schema.String,
  startedAt: Schema.optionalKey(Schema.String),
  finishedAt: Schema.optionalKey(Schema.String),
  durationMs: Schema.optionalKey(Schema.Number),
  summary: Schema.optionalKey(Schema.String),
  error: Schema.optionalKey(Schema.String)
})
const runWire = (run: TaskRun): typeof RunWire.Type => ({
  ...present("runId", run.runId),
  status: run.status,
  ...present("startedAt", run.startedAt),
  ...present("finishedAt", run.finishedAt),
  ...present("durationMs", run.durationMs),
  ...present("summary", run.summary),
  ...present("error", run.error)
})

/** A task as the log knows it at a point (`?at=`): its payload by kind only, no run state (the engine's). */
const taskAtWire = (task: TaskAt): typeof TaskWire.Type => ({
  id: task.id,
  name: task.name,
  enabled: task.enabled,
  schedule: task.schedule as typeof TaskWire.Type["schedule"],
  payload: task.payload,
  system: task.system,
  state: {}
})

const TaskDone = Schema.Struct({ success: Schema.Boolean, task: TaskWire })

export const layer = HttpRouter.use((router) =>
  Effect.gen(function*() {
    const { agentRoute } = yield* Kit.make(router)
    const tasks = yield* Tasks
    const agentsAt = yield* AgentsAt

    yield* agentRoute("GET", "/v0/agents/:agentId/tasks", {
      summary: "List the agent's scheduled tasks (or as Cairn recorded them: `?at=`)",
      description: `${atDescription} At a point a task is what its events hold: the tasks made through Cairn, each payload by its kind only, no run state.`,
      query: TasksQuery,
      response: { schema: Schema.Struct({ tasks: Schema.Array(TaskWire) }) },
      errors: [new Agent.AgentNotFound({ agentId: "" }), new ScheduledTask.FailedToListCronJobs({ agentId: "" })]
    }, ({ principal, agentId, request }) => {
      const at = query(request, "at")
      if (at === null) return Effect.map(tasks.list(principal, agentId, query(request, "includeDisabled")), (list) => ({ tasks: list.map(toWire) }))
      return Effect.gen(function*() {
        const withDisabled = yield* Effect.fromResult(ScheduledTask.includeDisabled(query(request, "includeDisabled")))
        const found = yield* agentsAt.at(principal, agentId, at)
        return { tasks: found.tasks.filter((task) => withDisabled || task.enabled).map(taskAtWire) }
      })
    })

    yield* agentRoute("POST", "/v0/agents/:agentId/tasks", { summary: "Create a scheduled task", body: { contentType: "application/json", description: "{name, schedule, payload, …} as the engine's cron holds it" }, response: { status: 201, schema: TaskDone }, errors: [new Agent.AgentNotFound({ agentId: "" }), new ScheduledTask.InvalidParameters({ reason: "" }), new ScheduledTask.FailedToCreateCronJob({ agentId: "" })] }, ({ principal, agentId, request }) =>
      Effect.gen(function*() {
        const task = yield* tasks.create(principal, agentId, yield* request.text)
        return Kit.created({ success: true, task: toWire(task) })
      }))

    yield* agentRoute("GET", "/v0/agents/:agentId/tasks/:jobId", { summary: "Get a scheduled task", response: { schema: Schema.Struct({ task: TaskWire }) }, errors: [new Agent.AgentNotFound({ agentId: "" }), new ScheduledTask.UnknownTask({ taskId: "" }), new ScheduledTask.FailedToReadCronJob({ agentId: "" })] }, ({ principal, agentId, params }) =>
      Effect.map(tasks.get(principal, agentId, params["jobId"] ?? ""), (task) => ({ task: toWire(task) })))

    yield* agentRoute("PUT", "/v0/agents/:agentId/tasks/:jobId", { summary: "Change a scheduled task", body: { contentType: "application/json" }, response: { schema: TaskDone }, errors: [new Agent.AgentNotFound({ agentId: "" }), new ScheduledTask.InvalidParameters({ reason: "" }), new ScheduledTask.UnknownTask({ taskId: "" }), new ScheduledTask.SystemTaskReadOnly({ taskId: "" }), new ScheduledTask.FailedToUpdateCronJob({ agentId: "" })] }, ({ principal, agentId, params, request }) =>
      Effect.gen(function*() {
        const task = yield* tasks.update(principal, agentId, params["jobId"] ?? "", yield* request.text)
        return { success: true, task: toWire(task) }
      }))

    yield* agentRoute("DELETE", "/v0/agents/:agentId/tasks/:jobId", { summary: "Delete a scheduled task", response: { schema: Kit.Done }, errors: [new Agent.AgentNotFound({ agentId: "" }), new ScheduledTask.UnknownTask({ taskId: "" }), new ScheduledTask.SystemTaskReadOnly({ taskId: "" }), new ScheduledTask.FailedToDeleteCronJob({ agentId: "" })] }, ({ principal, agentId, params }) =>
      Effect.as(tasks.remove(principal, agentId, params["jobId"] ?? ""), { success: true, message: "Task deleted" }))

    yield* agentRoute("POST", "/v0/agents/:agentId/tasks/:jobId/run", { summary: "Run a scheduled task now", response: { schema: Schema.Struct({ success: Schema.Boolean, runId: Schema.String }) }, errors: [new Agent.AgentNotFound({ agentId: "" }), new ScheduledTask.UnknownTask({ taskId: "" }), new ScheduledTask.FailedToRunCronJob({ agentId: "" })] }, ({ principal, agentId, params }) =>
      Effect.map(tasks.run(principal, agentId, params["jobId"] ?? ""), ({ runId }) => ({ success: true, runId })))

    yield* agentRoute("POST", "/v0/agents/:agentId/tasks/:jobId/toggle", { summary: "Enable or disable a scheduled task", body: { contentType: "application/json", description: "{enabled}" }, response: { schema: TaskDone }, errors: [new Agent.AgentNotFound({ agentId: "" }), new ScheduledTask.InvalidParameters({ reason: "" }), new ScheduledTask.UnknownTask({ taskId: "" }), new ScheduledTask.FailedToUpdateCronJob({ agentId: "" })] }, ({ principal, agentId, params, request }) =>
      Effect.gen(function*() {
        const task = yield* tasks.toggle(principal, agentId, params["jobId"] ?? "", yield* request.text)
        return { success: true, task: toWire(task) }
      }))

    yield* agentRoute("GET", "/v0/agents/:agentId/tasks/:jobId/runs", { summary: "A scheduled task's recent runs", query: RunsQuery, response: { schema: Schema.Struct({ runs: Schema.Array(RunWire) }) }, errors: [new Agent.AgentNotFound({ agentId: "" }), new ScheduledTask.UnknownTask({ taskId: "" }), new ScheduledTask.FailedToListCronJobRuns({ agentId: "" })] }, ({ principal, agentId, params, request }) =>
      Effect.map(tasks.runs(principal, agentId, params["jobId"] ?? "", query(request, "limit")), (runs) => ({ runs: runs.map(runWire) })))
  })
)
