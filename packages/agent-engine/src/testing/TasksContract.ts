/**
 * The AgentEngine contract for scheduled tasks, the engine's cron (see ContractSection.ts): what users create, read,
 * change, toggle, run and remove, the engine's own tasks listed but protected, tasks held by the engine itself (they
 * survive a restart of its gateway), and refusals while the gateway is down. A real engine runs an agent turn with no
 * model configured and fails it: the run is still listed, with a status of its own, which is all these cases ask.
 */
import { assert } from "@effect/vitest"
import { Clock, Effect } from "effect"
import { AgentEngine } from "../AgentEngine.ts"
import type { Task, TaskSpec } from "../WorkspaceOperations.ts"
import type { SectionContext } from "./ContractSection.ts"

let counter = 0
/** A task name no other case uses, so that finding it proves which task it is. */
const uniqueName = (prefix: string) =>
  `${prefix}-${Date.now().toString(36)}-${(counter++).toString(36)}-${Math.random().toString(36).slice(2, 8)}`

const hour = 3_600_000

/**
 * Runs `attempt` until `done` holds of its result or `withinMs` have passed on the wall clock, and gives the last
 * result. Waits with real timers, not Effect's clock, so that it also works where a TestClock stands still.
 */
const eventually = <A, E, R>(attempt: Effect.Effect<A, E, R>, done: (value: A) => boolean, withinMs: number) =>
  Effect.gen(function*() {
    const deadline = Date.now() + withinMs
    while (true) {
      const value = yield* attempt
      if (done(value) || Date.now() > deadline) return value
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 500)))
    }
  })

/** What a task is, apart from its changing state: what reading it twice must agree on. */
const definition = (task: Task) => {
  const { state: _state, ...rest } = task
  return rest
}

const morning = "A summary every morning"
const dailyAgentTurn = (name: string): TaskSpec => ({
  name,
  description: morning,
  schedule: { kind: "cron", expr: "0 9 * * *", tz: "UTC" },
  payload: { kind: "agentTurn", text: "Summarise yesterday in three lines." }
})

export const tasksContract = <R>(context: SectionContext<R>): void => {
  const { it, timeout, drive } = context

  it.effect("lists the engine's own tasks on a running agent, marked as such, and refuses to change or remove them", () =>
    Effect.gen(function*() {
      const engine = yield* AgentEngine
      const agentId = yield* context.aRunningAgent
      // A real engine declares its own jobs as its gateway comes up: give it a moment.
      const tasks = yield* eventually(
        engine.listTasks(agentId, { includeDisabled: true }),
        (tasks) => tasks.some((task) => task.system),
        60_000
      )
      const system = tasks.find((task) => task.system)
      assert.isDefined(system, "a running agent lists no task of the engine's own")
      assert.isTrue((yield* engine.getTask(agentId, system!.id)).system)

      assert.deepInclude(yield* Effect.flip(engine.removeTask(agentId, system!.id)), {
        _tag: "SystemTaskProtected",
        agentId,
        taskId: system!.id
      })
      assert.deepInclude(yield* Effect.flip(engine.updateTask(agentId, system!.id, { name: uniqueName("renamed") })), {
        _tag: "SystemTaskProtected",
        agentId,
        taskId: system!.id
      })
      assert.deepInclude(
        yield* Effect.flip(engine.updateTask(agentId, system!.id, { enabled: !system!.enabled, description: "mine now" })),
        { _tag: "SystemTaskProtected", taskId: system!.id },
        "a change to more than `enabled` went through on a system task"
      )
      const after = yield* engine.getTask(agentId, system!.id)
      assert.deepStrictEqual(
        { name: after.name, description: after.description, system: after.system },
        { name: system!.name, description: system!.description, system: true }
      )
    }), timeout)

  it.effect("adds a task, reads and lists it, changes and toggles it, then removes it for good", () =>
    Effect.gen(function*() {
      const engine = yield* AgentEngine
      const agentId = yield* context.aRunningAgent
      const name = uniqueName("daily")
      const spec = dailyAgentTurn(name)

      const added = yield* engine.addTask(agentId, spec)
      assert.isNotEmpty(added.id)
      assert.deepInclude(added, {
        name,
        description: morning,
        enabled: true,
        system: false,
        payload: { kind: "agentTurn", text: "Summarise yesterday in three lines." }
      })
      assert.deepInclude(added.schedule, { kind: "cron", expr: "0 9 * * *", tz: "UTC" })
      // The defaults: a run of its own, started at once, its result delivered nowhere.
      assert.deepInclude(added, { sessionTarget: "isolated", wakeMode: "now" })
      assert.strictEqual(added.delivery?.mode, "none")
      // Times are the engine's: Effect's clock, the wall clock of a real engine.
      const now = yield* Clock.currentTimeMillis
      assert.isDefined(added.state.nextRunAt, "an enabled task has no next run")
      const nextRun = Date.parse(added.state.nextRunAt!)
      assert.isTrue(nextRun > now && nextRun <= now + 25 * hour, `next run ${added.state.nextRunAt}`)
      assert.strictEqual(new Date(nextRun).toISOString(), added.state.nextRunAt, "nextRunAt is not an ISO timestamp")

      assert.deepStrictEqual(definition(yield* engine.getTask(agentId, added.id)), definition(added))
      const enabledOnly = yield* engine.listTasks(agentId, { includeDisabled: false })
      assert.deepStrictEqual(definition(enabledOnly.find((task) => task.id === added.id)!), definition(added))

      const renamed = uniqueName("hourly")
      const changed = yield* engine.updateTask(agentId, added.id, {
        name: renamed,
        schedule: { kind: "every", everyMs: hour }
      })
      assert.deepInclude(changed, { id: added.id, name: renamed, description: morning, enabled: true })
      assert.deepInclude(changed.schedule, { kind: "every", everyMs: hour })
      assert.deepStrictEqual(changed.payload, added.payload, "a change of schedule changed the payload")
      const hourly = Date.parse(changed.state.nextRunAt ?? "")
      const later = yield* Clock.currentTimeMillis
      assert.isTrue(hourly > later && hourly <= later + hour + 60_000, `next run ${changed.state.nextRunAt}`)
      assert.strictEqual((yield* engine.getTask(agentId, added.id)).name, renamed)

      const disabled = yield* engine.updateTask(agentId, added.id, { enabled: false })
      assert.deepInclude(disabled, { id: added.id, name: renamed, enabled: false })
      assert.isFalse((yield* engine.getTask(agentId, added.id)).enabled)
      const listedEnabled = yield* engine.listTasks(agentId, { includeDisabled: false })
      assert.isUndefined(listedEnabled.find((task) => task.id === added.id), "a disabled task is listed without includeDisabled")
      const listedAll = yield* engine.listTasks(agentId, { includeDisabled: true })
      assert.deepInclude(listedAll.find((task) => task.id === added.id), { name: renamed, enabled: false })

      const enabled = yield* engine.updateTask(agentId, added.id, { enabled: true })
      assert.deepInclude(enabled, { name: renamed, enabled: true })
      const relisted = yield* engine.listTasks(agentId, { includeDisabled: false })
      assert.isDefined(relisted.find((task) => task.id === added.id), "a task enabled again is not listed")

      yield* engine.removeTask(agentId, added.id)
      const notFound = { _tag: "TaskNotFound", agentId, taskId: added.id } as const
      assert.deepInclude(yield* Effect.flip(engine.getTask(agentId, added.id)), notFound)
      const remaining = yield* engine.listTasks(agentId, { includeDisabled: true })
      assert.isUndefined(remaining.find((task) => task.id === added.id), "a removed task is still listed")
      assert.deepInclude(yield* Effect.flip(engine.removeTask(agentId, added.id)), notFound)
      assert.deepInclude(yield* Effect.flip(engine.updateTask(agentId, added.id, { enabled: false })), notFound)
      assert.deepInclude(yield* Effect.flip(engine.runTask(agentId, added.id)), notFound)
      assert.deepInclude(yield* Effect.flip(engine.taskRuns(agentId, added.id, 10)), notFound)
    }), timeout)

  it.effect("adds a disabled system-event task, listed only with the disabled ones", () =>
    Effect.gen(function*() {
      const engine = yield* AgentEngine
      const agentId = yield* context.aRunningAgent
      const name = uniqueName("reminder")
      const at = new Date((yield* Clock.currentTimeMillis) + 24 * hour).toISOString()
      const added = yield* engine.addTask(agentId, {
        name,
        enabled: false,
        schedule: { kind: "at", at },
        payload: { kind: "systemEvent", message: "Time to water the plants." }
      })
      assert.deepInclude(added, {
        name,
        enabled: false,
        system: false,
        payload: { kind: "systemEvent", message: "Time to water the plants." }
      })
      assert.deepInclude(added.schedule, { kind: "at" })
      assert.strictEqual(Date.parse(String(added.schedule["at"])), Date.parse(at))
      assert.isUndefined(
        (yield* engine.listTasks(agentId, { includeDisabled: false })).find((task) => task.id === added.id),
        "a task added disabled is listed without includeDisabled"
      )
      const listed = (yield* engine.listTasks(agentId, { includeDisabled: true })).find((task) => task.id === added.id)
      assert.deepStrictEqual(definition(listed!), definition(added))
      yield* engine.removeTask(agentId, added.id)
    }), timeout)

  it.effect("runs a task now, whatever its schedule: the run is queued with an id and listed among the task's runs", () =>
    Effect.gen(function*() {
      const engine = yield* AgentEngine
      const agentId = yield* context.aRunningAgent
      const added = yield* engine.addTask(agentId, {
        name: uniqueName("on-demand"),
        schedule: { kind: "every", everyMs: 24 * hour },
        payload: { kind: "agentTurn", text: "Say hello." }
      })
      assert.deepStrictEqual(yield* engine.taskRuns(agentId, added.id, 10), [], "a task never run has runs")

      const { runId } = yield* engine.runTask(agentId, added.id)
      assert.isNotEmpty(runId)
      // A real engine lists a run once it has finished (an agent turn without a model fails within seconds).
      const runs = yield* eventually(engine.taskRuns(agentId, added.id, 10), (runs) => runs.length > 0, 120_000)
      assert.isAtLeast(runs.length, 1, "the run never showed among the task's runs")
      const run = runs.find((entry) => entry.runId === runId)
      assert.isDefined(run, `no run ${runId} among ${JSON.stringify(runs)}`)
      assert.isNotEmpty(run!.status)
      assert.isAtMost((yield* engine.taskRuns(agentId, added.id, 1)).length, 1, "more runs than the limit")
      assert.isDefined((yield* engine.getTask(agentId, added.id)).state.lastRunAt, "a task that ran has no last run")
      yield* engine.removeTask(agentId, added.id)
    }), timeout)

  it.effect("keeps tasks in the engine across a restart of its gateway, and needs the gateway running for them", () =>
    Effect.gen(function*() {
      const engine = yield* AgentEngine
      const agentId = yield* context.freshAgent
      yield* drive(engine.start(agentId))
      const kept = yield* engine.addTask(agentId, dailyAgentTurn(uniqueName("kept")))
      const paused = yield* engine.addTask(agentId, {
        ...dailyAgentTurn(uniqueName("paused")),
        enabled: false,
        schedule: { kind: "every", everyMs: 2 * hour }
      })

      yield* drive(engine.restart(agentId))
      const listed = yield* engine.listTasks(agentId, { includeDisabled: true })
      for (const task of [kept, paused]) {
        const found = listed.find((entry) => entry.id === task.id)
        assert.isDefined(found, `task ${task.name} did not survive the restart`)
        assert.deepStrictEqual(definition(found!), definition(task))
      }

      yield* engine.stop(agentId)
      const failed = { _tag: "TasksFailed", agentId } as const
      assert.deepInclude(yield* Effect.flip(engine.listTasks(agentId, { includeDisabled: true })), failed)
      assert.deepInclude(yield* Effect.flip(engine.getTask(agentId, kept.id)), failed)
      assert.deepInclude(yield* Effect.flip(engine.addTask(agentId, dailyAgentTurn(uniqueName("late")))), failed)
      assert.deepInclude(yield* Effect.flip(engine.updateTask(agentId, kept.id, { enabled: false })), failed)
      assert.deepInclude(yield* Effect.flip(engine.removeTask(agentId, kept.id)), failed)
      assert.deepInclude(yield* Effect.flip(engine.runTask(agentId, kept.id)), failed)
      assert.deepInclude(yield* Effect.flip(engine.taskRuns(agentId, kept.id, 10)), failed)
      const detail = (yield* Effect.flip(engine.listTasks(agentId, { includeDisabled: false }))) as { readonly detail?: string }
      assert.isNotEmpty(detail.detail ?? "", "TasksFailed says nothing of why")

      const unknown = uniqueName("never")
      assert.deepInclude(yield* Effect.flip(engine.listTasks(unknown, { includeDisabled: true })), {
        _tag: "AgentNotProvisioned",
        agentId: unknown
      })
      yield* engine.destroy(agentId)
    }), timeout)
}
