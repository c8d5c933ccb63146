import { assert, describe, it } from "@effect/vitest"
import * as _ from "../../src/simulated/CronStore.ts"
import type { TaskRun } from "../../src/WorkspaceOperations.ts"

const hour = 3_600_000
const now = Date.parse("2026-11-23T10:15:00.000Z")

const fresh = () => {
  let n = 0
  return _.make(() => `id-${++n}`, now)
}

describe("CronStore", () => {
  it("starts with OpenClaw's own three jobs, marked system, listed by their next run", () => {
    const cron = fresh()
    const tasks = cron.list(now, true)
    assert.deepStrictEqual(tasks.map((task) => [task.name, task.system, task.state.nextRunAt]), [
      ["heartbeat-main", true, "2026-11-23T10:45:00.000Z"],
      ["Memory Dreaming Promotion", true, "2026-11-24T03:00:00.000Z"],
      ["skill-collection-review-main", true, "2026-11-30T10:15:00.000Z"]
    ])
    assert.deepInclude(tasks[0], { schedule: { kind: "every", everyMs: 30 * 60_000 }, payload: { kind: "heartbeat" } })
    assert.deepInclude(tasks[1], { schedule: { kind: "cron", expr: "0 3 * * *" } })
  })

  it("adds a task with OpenClaw's defaults, computing its next run in its time zone", () => {
    const cron = fresh()
    const task = cron.add({
      name: "daily",
      schedule: { kind: "cron", expr: "0 9 * * *", tz: "America/Los_Angeles" },
      payload: { kind: "agentTurn", text: "hi" }
    }, now)
    assert.notInstanceOf(task, _.Refused)
    if (task instanceof _.Refused) return
    assert.deepStrictEqual(task, {
      id: "id-4",
      name: "daily",
      enabled: true,
      schedule: { kind: "cron", expr: "0 9 * * *", tz: "America/Los_Angeles" },
      sessionTarget: "isolated",
      wakeMode: "now",
      payload: { kind: "agentTurn", text: "hi" },
      delivery: { mode: "none" },
      system: false,
      state: { nextRunAt: "2026-11-23T17:00:00.000Z" }
    })
    const event = cron.add({ name: "e", schedule: { kind: "every", everyMs: hour }, payload: { kind: "systemEvent", message: "m" } }, now)
    assert.deepInclude(event, { sessionTarget: "main", state: { nextRunAt: "2026-11-23T11:15:00.000Z" } })
    assert.deepInclude(cron.get("id-5", now + 90 * 60_000), { state: { nextRunAt: "2026-11-23T12:15:00.000Z" } })
  })

  it("keeps an `at` time as OpenClaw does, with a next run only while it is ahead", () => {
    const cron = fresh()
    const task = cron.add({ name: "once", schedule: { kind: "at", at: "2026-11-24T00:00:00Z" }, payload: { kind: "systemEvent", message: "m" } }, now)
    assert.deepInclude(task, { schedule: { kind: "at", at: "2026-11-24T00:00:00.000Z" }, state: { nextRunAt: "2026-11-24T00:00:00.000Z" } })
    assert.deepStrictEqual(cron.get((task as { id: string }).id, Date.parse("2026-11-25T00:00:00Z"))?.state, {})
  })

  it("refuses schedules OpenClaw refuses, with croner's words", () => {
    const cron = fresh()
    const bad = cron.add({ name: "x", schedule: { kind: "cron", expr: "not a cron" }, payload: { kind: "systemEvent", message: "m" } }, now)
    assert.instanceOf(bad, _.Refused)
    assert.match((bad as _.Refused).detail, /^invalid cron\.add params: CronPattern: /)
    assert.instanceOf(cron.add({ name: "x", schedule: { kind: "cron", expr: "61 * * * *" }, payload: { kind: "systemEvent", message: "m" } }, now), _.Refused)
    assert.instanceOf(cron.add({ name: "x", schedule: { kind: "cron", expr: "0 9 * * *", tz: "Mars/Olympus" }, payload: { kind: "systemEvent", message: "m" } }, now), _.Refused)
    assert.instanceOf(cron.add({ name: "x", schedule: { kind: "at", at: "someday" }, payload: { kind: "systemEvent", message: "m" } }, now), _.Refused)
    assert.strictEqual(cron.list(now, true).length, 3, "a refused job was kept")
  })

  it("hides disabled tasks unless asked, without a next run", () => {
    const cron = fresh()
    const off = cron.add({ name: "off", enabled: false, schedule: { kind: "every", everyMs: hour }, payload: { kind: "systemEvent", message: "m" } }, now)
    assert.deepInclude(off, { enabled: false, state: {} })
    assert.isFalse(cron.list(now, false).some((task) => task.name === "off"))
    assert.strictEqual(cron.list(now, true).at(-1)?.name, "off", "a job without a next run is listed last")
  })

  it("merges a patch, and lets a system job change only `enabled`", () => {
    const cron = fresh()
    const task = cron.add({ name: "a", description: "d", schedule: { kind: "every", everyMs: hour }, payload: { kind: "agentTurn", text: "t" } }, now) as { id: string }
    const changed = cron.update(task.id, { name: "b", schedule: { kind: "cron", expr: "30 * * * *" } }, now)
    assert.deepInclude(changed, { name: "b", description: "d", payload: { kind: "agentTurn", text: "t" }, state: { nextRunAt: "2026-11-23T10:30:00.000Z" } })
    assert.instanceOf(cron.update(task.id, { schedule: { kind: "cron", expr: "bad" } }, now), _.Refused)
    assert.deepInclude(cron.update(task.id, { payload: { kind: "systemEvent", message: "m" } }, now), { sessionTarget: "main" }, "moved with its payload")
    assert.deepInclude(cron.update(task.id, { payload: { kind: "agentTurn", text: "t" }, sessionTarget: "isolated" }, now), { sessionTarget: "isolated" })
    assert.strictEqual(cron.update("nope", { enabled: false }, now), "missing")
    const heartbeat = cron.list(now, true).find((job) => job.name === "heartbeat-main")!
    assert.strictEqual(cron.update(heartbeat.id, { name: "mine" }, now), "protected")
    assert.strictEqual(cron.update(heartbeat.id, { enabled: false, description: "x" }, now), "protected")
    assert.deepInclude(cron.update(heartbeat.id, { enabled: false }, now), { enabled: false, system: true, name: "heartbeat-main" })
  })

  it("removes user tasks, never system ones", () => {
    const cron = fresh()
    const task = cron.add({ name: "a", schedule: { kind: "every", everyMs: hour }, payload: { kind: "agentTurn", text: "t" } }, now) as { id: string }
    assert.strictEqual(cron.remove(task.id), "removed")
    assert.strictEqual(cron.remove(task.id), "missing")
    assert.isUndefined(cron.get(task.id, now))
    assert.strictEqual(cron.remove(cron.list(now, true)[0]!.id), "protected")
  })

  it("records runs at once, newest first: an agent turn fails without a model, a system event is delivered", () => {
    const cron = fresh()
    const turn = cron.add({ name: "a", schedule: { kind: "every", everyMs: hour }, payload: { kind: "agentTurn", text: "t" } }, now) as { id: string }
    const event = cron.add({ name: "e", schedule: { kind: "every", everyMs: hour }, payload: { kind: "systemEvent", message: "ping" } }, now) as { id: string }
    assert.deepStrictEqual(cron.runs(turn.id, 10), [])
    const first = cron.run(turn.id, now)
    const second = cron.run(turn.id, now + 1000)
    assert.deepStrictEqual(first, { runId: `manual:${turn.id}:${now}:1` })
    const runs = cron.runs(turn.id, 10) as ReadonlyArray<TaskRun>
    assert.deepStrictEqual(runs, [
      { runId: `manual:${turn.id}:${now + 1000}:2`, status: "error", error: _.noModelError, startedAt: "2026-11-23T10:15:01.000Z", finishedAt: "2026-11-23T10:15:01.000Z", durationMs: 0 },
      { runId: `manual:${turn.id}:${now}:1`, status: "error", error: _.noModelError, startedAt: "2026-11-23T10:15:00.000Z", finishedAt: "2026-11-23T10:15:00.000Z", durationMs: 0 }
    ])
    assert.deepStrictEqual(cron.runs(turn.id, 1), [runs[0]])
    assert.notDeepEqual(second, first)
    assert.deepInclude(cron.get(turn.id, now + 1000)?.state, { lastRunAt: "2026-11-23T10:15:01.000Z", lastStatus: "error" })
    cron.run(event.id, now)
    assert.deepInclude((cron.runs(event.id, 10) as ReadonlyArray<TaskRun>)[0], { status: "ok", summary: "ping" })
    assert.strictEqual(cron.run("nope", now), "missing")
    assert.strictEqual(cron.runs("nope", 10), "missing")
  })
})
