import { ScheduledTask } from "@cairn/domain"
import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import { given } from "../DeciderSpec.ts"

const at = "2026-11-23T10:00:00.000Z"
const created = {
  agentId: "a1",
  workspaceId: "w1",
  taskId: "t1",
  name: "daily",
  schedule: { kind: "cron" as const, expr: "0 9 * * *", tz: "UTC" },
  payloadKind: "agentTurn",
  enabled: true,
  at
}
const history = [new ScheduledTask.TaskCreated(created)]

describe("the task record", () => {
  it("records a creation once: the same engine id again is refused", () => {
    given(ScheduledTask.decider).when(new ScheduledTask.RecordTaskCreated(created)).then([new ScheduledTask.TaskCreated(created)])
    given(ScheduledTask.decider, history).when(new ScheduledTask.RecordTaskCreated(created)).thenFails(
      new ScheduledTask.TaskAlreadyRecorded({ taskId: "t1" })
    )
  })

  it("records changes, toggles, runs and deletes, of tasks it created and of tasks the agent made itself", () => {
    const updated = { agentId: "a1", taskId: "t1", name: "nightly", fields: ["name", "schedule"], schedule: { kind: "every" as const, everyMs: 60_000 }, at }
    const toggled = { agentId: "a1", taskId: "heartbeat", name: "heartbeat-main", enabled: false, system: true, at }
    const run = { agentId: "a1", taskId: "t9", name: "inside", runId: "manual:1", at }
    const deleted = { agentId: "a1", taskId: "t9", name: "inside", at }
    given(ScheduledTask.decider, history).when(new ScheduledTask.RecordTaskUpdated(updated)).then([new ScheduledTask.TaskUpdated(updated)])
    given(ScheduledTask.decider).when(new ScheduledTask.RecordTaskToggled(toggled)).then([new ScheduledTask.TaskToggled(toggled)])
    given(ScheduledTask.decider).when(new ScheduledTask.RecordTaskRunRequested(run)).then([new ScheduledTask.TaskRunRequested(run)])
    given(ScheduledTask.decider).when(new ScheduledTask.RecordTaskDeleted(deleted)).then([new ScheduledTask.TaskDeleted(deleted)])
  })

  it("keeps the live tasks it created by name: renamed, then gone once deleted, so the id may be recorded again", () => {
    const renamed = given(ScheduledTask.decider, history).when(
      new ScheduledTask.RecordTaskUpdated({ agentId: "a1", taskId: "t1", name: "renamed", fields: ["name"], at })
    ).state()
    assert.deepStrictEqual(Result.getOrThrow(Result.map(renamed, (s) => [...s.live])), [["t1", "renamed"]])
    const deleted = [...history, new ScheduledTask.TaskDeleted({ agentId: "a1", taskId: "t1", name: "daily", at })]
    given(ScheduledTask.decider, deleted).when(new ScheduledTask.RecordTaskCreated(created)).then([new ScheduledTask.TaskCreated(created)])
  })
})
