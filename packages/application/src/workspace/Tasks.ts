/**
 * An agent's scheduled tasks: the engine's cron, driven through the AgentEngine port (the tasks live in the engine
 * and survive its restarts; listing them needs a running gateway). Bodies are checked by the domain's rules first
 * (ScheduledTask.Spec), so a malformed task never reaches the engine. What users do (create, change, toggle, run,
 * delete) is recorded on the agent's tasks stream with the caller as actor. The engine's own jobs are listed and
 * marked `system`; they may be run and toggled, never changed or deleted.
 */
import { AgentEngine, type Task, type TaskRun } from "@cairn/agent-engine"
import { type Agent, ScheduledTask } from "@cairn/domain"
import { Context, Effect, Layer, Result, Semaphore } from "effect"
import type { Principal } from "../Access.ts"
import { Agents } from "../agents/Agents.ts"
import { Gateway } from "../gateway/Gateway.ts"
import { CommandHandler } from "../CommandHandler.ts"
import { now } from "../Now.ts"

export type { Task, TaskRun }

type EngineTaskError = { readonly _tag: "TaskNotFound" | "SystemTaskProtected" | "TasksFailed" | "AgentNotProvisioned" }

/** A request body as JSON; anything else is a task body that is not well-formed. */
const json = (body: string): Result.Result<unknown, ScheduledTask.InvalidParameters> => {
  try {
    return Result.succeed(JSON.parse(body))
  } catch {
    return Result.fail(new ScheduledTask.InvalidParameters({ reason: "the request body is not valid JSON" }))
  }
}

export class Tasks extends Context.Service<Tasks>()("cairn/Tasks", {
  make: Effect.gen(function*() {
    const commands = yield* CommandHandler
    const engine = yield* AgentEngine
    const agents = yield* Agents
    const gateway = yield* Gateway

    // Creates for one agent take turns, so that concurrent ones cannot both see room for the last task.
    const creating = new Map<string, Semaphore.Semaphore>()
    const oneCreateAt = (agentId: string) => {
      let lock = creating.get(agentId)
      if (lock === undefined) creating.set(agentId, lock = Semaphore.makeUnsafe(1))
      return Semaphore.withPermit(lock)
    }

    /**
     * The engine's refusals as the documented errors: an unknown task is 404, a system job 403, and anything else
     * (the scheduler refused, the gateway is down, the engine does not hold the agent) the operation's own 500.
     */
    const fromEngine = <F>(taskId: string, failed: () => F) =>
    <A, E extends EngineTaskError>(
      operation: Effect.Effect<A, E>
    ): Effect.Effect<A, ScheduledTask.UnknownTask | ScheduledTask.SystemTaskReadOnly | F> =>
      operation.pipe(Effect.catch((error: EngineTaskError): Effect.Effect<never, ScheduledTask.UnknownTask | ScheduledTask.SystemTaskReadOnly | F> => {
        switch (error._tag) {
          case "TaskNotFound":
            return Effect.fail(new ScheduledTask.UnknownTask({ taskId }))
          case "SystemTaskProtected":
            return Effect.fail(new ScheduledTask.SystemTaskReadOnly({ taskId }))
          default:
            return Effect.logWarning("Scheduled task operation failed", error).pipe(Effect.andThen(Effect.fail(failed())))
        }
      }))

    const record = (principal: Principal, agentId: string, command: ScheduledTask.TaskCommand) =>
      commands.execute(ScheduledTask.decider, ScheduledTask.stream(agentId), command, { actor: principal.userId })

    /** The agent, if the caller's workspace has it, with its gateway up (the engine's scheduler lives in it). */
    const visible = (principal: Principal, agentId: string): Effect.Effect<unknown, Agent.AgentNotFound | Agent.GatewayStarting> =>
      agents.get(principal.workspaceId, agentId).pipe(Effect.tap(() => gateway.ready(agentId)))

    /** `includeDisabled` is the raw query value. */
    const list = Effect.fn("Tasks.list")(function*(principal: Principal, agentId: string, includeDisabled: string | null) {
      yield* visible(principal, agentId)
      const withDisabled = yield* Effect.fromResult(ScheduledTask.includeDisabled(includeDisabled))
      return yield* engine.listTasks(agentId, { includeDisabled: withDisabled }).pipe(
        fromEngine("", () => new ScheduledTask.FailedToListCronJobs({ agentId }))
      )
    })

    const taskOf = <F>(agentId: string, taskId: string, failed: () => F) =>
      engine.getTask(agentId, taskId).pipe(fromEngine(taskId, failed))

    const get = Effect.fn("Tasks.get")(function*(principal: Principal, agentId: string, taskId: string) {
      yield* visible(principal, agentId)
      return yield* taskOf(agentId, taskId, () => new ScheduledTask.FailedToReadCronJob({ agentId }))
    })

    /** `body` is the request's text. */
    const create = Effect.fn("Tasks.create")(function*(principal: Principal, agentId: string, body: string) {
      yield* visible(principal, agentId)
      const at = yield* now
      const spec = yield* Effect.fromResult(Result.flatMap(json(body), (input) => ScheduledTask.parseSpec(input, at)))
      const failed = () => new ScheduledTask.FailedToCreateCronJob({ agentId })
      const task = yield* Effect.gen(function*() {
        const existing = yield* engine.listTasks(agentId, { includeDisabled: true }).pipe(fromEngine("", failed))
        yield* Effect.fromResult(ScheduledTask.checkRoom(existing))
        return yield* engine.addTask(agentId, spec).pipe(fromEngine("", failed))
      }).pipe(oneCreateAt(agentId))
      yield* record(principal, agentId, new ScheduledTask.RecordTaskCreated({
        agentId,
        workspaceId: principal.workspaceId,
        taskId: task.id,
        name: task.name,
        schedule: spec.schedule,
        payloadKind: spec.payload.kind,
        enabled: task.enabled,
        at
      }))
      return task
    })

    /** Changes the fields `body` (the request's text) gives; a system job refuses. */
    const update = Effect.fn("Tasks.update")(function*(principal: Principal, agentId: string, taskId: string, body: string) {
      yield* visible(principal, agentId)
      const failed = () => new ScheduledTask.FailedToUpdateCronJob({ agentId })
      const current = yield* taskOf(agentId, taskId, failed)
      if (current.system) return yield* new ScheduledTask.SystemTaskReadOnly({ taskId })
      const at = yield* now
      const patch = yield* Effect.fromResult(Result.flatMap(json(body), (input) => ScheduledTask.parsePatch(input, current, at)))
      const task = yield* engine.updateTask(agentId, taskId, patch).pipe(fromEngine(taskId, failed))
      yield* record(principal, agentId, new ScheduledTask.RecordTaskUpdated({
        agentId,
        taskId,
        name: task.name,
        fields: ScheduledTask.patchFields.filter((field) => patch[field] !== undefined),
        ...(patch.schedule === undefined ? {} : { schedule: patch.schedule }),
        at
      }))
      return task
    })

    /** Enables or disables a task (`body` is `{enabled}`); system jobs too. */
    const toggle = Effect.fn("Tasks.toggle")(function*(principal: Principal, agentId: string, taskId: string, body: string) {
      yield* visible(principal, agentId)
      const enabled = yield* Effect.fromResult(Result.flatMap(json(body), ScheduledTask.parseToggle))
      const task = yield* engine.updateTask(agentId, taskId, { enabled }).pipe(
        fromEngine(taskId, () => new ScheduledTask.FailedToUpdateCronJob({ agentId }))
      )
      yield* record(principal, agentId, new ScheduledTask.RecordTaskToggled({
        agentId,
        taskId,
        name: task.name,
        enabled: task.enabled,
        system: task.system,
        at: yield* now
      }))
      return task
    })

    const remove = Effect.fn("Tasks.remove")(function*(principal: Principal, agentId: string, taskId: string) {
      yield* visible(principal, agentId)
      const failed = () => new ScheduledTask.FailedToDeleteCronJob({ agentId })
      const task = yield* taskOf(agentId, taskId, failed)
      if (task.system) return yield* new ScheduledTask.SystemTaskReadOnly({ taskId })
      yield* engine.removeTask(agentId, taskId).pipe(fromEngine(taskId, failed))
      yield* record(principal, agentId, new ScheduledTask.RecordTaskDeleted({ agentId, taskId, name: task.name, at: yield* now }))
    })

    /** Runs a task now, whatever its schedule; answers once the run is queued. */
    const run = Effect.fn("Tasks.run")(function*(principal: Principal, agentId: string, taskId: string) {
      yield* visible(principal, agentId)
      const failed = () => new ScheduledTask.FailedToRunCronJob({ agentId })
      const task = yield* taskOf(agentId, taskId, failed)
      const { runId } = yield* engine.runTask(agentId, taskId).pipe(fromEngine(taskId, failed))
      yield* record(principal, agentId, new ScheduledTask.RecordTaskRunRequested({ agentId, taskId, name: task.name, runId, at: yield* now }))
      return { runId }
    })

    /** The task's recent runs, newest first; `limit` is the raw query value. */
    const runs = Effect.fn("Tasks.runs")(function*(principal: Principal, agentId: string, taskId: string, limit: string | null) {
      yield* visible(principal, agentId)
      const count = yield* Effect.fromResult(ScheduledTask.runsLimit(limit))
      return yield* engine.taskRuns(agentId, taskId, count).pipe(
        fromEngine(taskId, () => new ScheduledTask.FailedToListCronJobRuns({ agentId }))
      )
    })

    return { list, get, create, update, toggle, remove, run, runs }
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
