import { ScheduledTask, ValidationFailed } from "@cairn/domain"
import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"

const now = "2026-11-23T10:00:00.000Z"
const agentTurn = { kind: "agentTurn", text: "Summarize yesterday" }
const valid = { name: "daily-check-in", schedule: { kind: "cron", expr: "0 9 * * *", tz: "America/Los_Angeles" }, payload: agentTurn }

const refused = (result: Result.Result<unknown, ScheduledTask.InvalidParameters>, reason: string | RegExp) => {
  assert.isTrue(Result.isFailure(result), `expected a refusal for ${reason}`)
  const error = (result as Result.Failure<unknown, ScheduledTask.InvalidParameters>).failure
  assert.strictEqual(error.status, 400)
  assert.strictEqual(error.message, "Invalid parameters")
  if (typeof reason === "string") assert.strictEqual(error.reason, reason)
  else assert.match(error.reason, reason)
}
const spec = (body: unknown) => ScheduledTask.parseSpec(body, now)

describe("a new task", () => {
  it("takes Pinata's body, every field checked and kept, unknown ones dropped", () => {
    const full = {
      name: "  daily-check-in ",
      description: "Morning summary",
      enabled: false,
      schedule: { kind: "cron", expr: "0 9 * * 1-5", tz: "UTC" },
      sessionTarget: "isolated",
      wakeMode: "next-heartbeat",
      payload: { kind: "agentTurn", text: "Hello", model: "anthropic/claude", thinking: "low", timeoutSeconds: 300, extra: 1 },
      delivery: { mode: "announce", channel: "telegram", to: "123456789", bestEffort: true },
      skill: "bafy-ignored"
    }
    assert.deepStrictEqual(spec(full), Result.succeed({
      name: "daily-check-in",
      description: "Morning summary",
      enabled: false,
      sessionTarget: "isolated" as const,
      wakeMode: "next-heartbeat" as const,
      delivery: { mode: "announce" as const, channel: "telegram", to: "123456789", bestEffort: true },
      schedule: { kind: "cron" as const, expr: "0 9 * * 1-5", tz: "UTC" },
      payload: { kind: "agentTurn" as const, text: "Hello", model: "anthropic/claude", thinking: "low", timeoutSeconds: 300 }
    }))
    assert.deepStrictEqual(spec({ ...valid, description: null, delivery: null }), spec(valid))
  })

  it("takes a cron expression for the schedule and a plain message for the payload, as shorthand", () => {
    const short = spec({ name: "hello", schedule: "*/5 * * * *", payload: "say hello" })
    assert.isTrue(Result.isSuccess(short))
    const parsed = (short as Result.Success<ScheduledTask.Spec, never>).success
    assert.deepStrictEqual(parsed.schedule, { kind: "cron", expr: "*/5 * * * *" })
    assert.deepStrictEqual(parsed.payload, { kind: "agentTurn", text: "say hello" })
    refused(spec({ ...valid, payload: "  " }), "payload must not be empty")
  })

  it("takes the three kinds of schedule and both kinds of payload", () => {
    assert.isTrue(Result.isSuccess(spec({ ...valid, schedule: { kind: "every", everyMs: 60_000, staggerMs: 0 } })))
    assert.isTrue(Result.isSuccess(spec({ ...valid, schedule: { kind: "cron", expr: "0 0 9 * * *" } })))
    assert.isTrue(Result.isSuccess(spec({ ...valid, payload: { kind: "systemEvent", message: "wake up" }, sessionTarget: "main" })))
    // An `at` without an offset is UTC, and goes to the engine as UTC.
    assert.deepStrictEqual(Result.map(spec({ ...valid, schedule: { kind: "at", at: "2026-12-01T12:00" } }), (s) => s.schedule), Result.succeed({
      kind: "at" as const,
      at: "2026-12-01T12:00:00.000Z"
    }))
    assert.deepStrictEqual(Result.map(spec({ ...valid, schedule: { kind: "at", at: "2026-12-01T12:00:00+02:00" } }), (s) => s.schedule), Result.succeed({
      kind: "at" as const,
      at: "2026-12-01T10:00:00.000Z"
    }))
  })

  it("refuses a missing or malformed name", () => {
    const { name: _, ...nameless } = valid
    refused(spec(nameless), "name is required")
    refused(spec({ ...valid, name: null }), "name is required")
    refused(spec({ ...valid, name: "   " }), "name must not be empty")
    refused(spec({ ...valid, name: 7 }), "name must be a string")
    refused(spec({ ...valid, name: "x".repeat(201) }), "name must be at most 200 characters")
    assert.isTrue(Result.isSuccess(spec({ ...valid, name: "x".repeat(200) })))
  })

  it("refuses a missing or malformed schedule: bad cron, unknown time zone, too frequent, never again, interval under a minute, bad at", () => {
    const { schedule: _, ...unscheduled } = valid
    refused(spec(unscheduled), "schedule is required")
    refused(spec({ ...valid, schedule: 9 }), "schedule must be an object")
    refused(spec({ ...valid, schedule: "not a cron" }), /^schedule\.expr: CronPattern: invalid configuration format/)
    refused(spec({ ...valid, schedule: "* * * * * *" }), "schedule.expr fires more often than once a minute")
    refused(spec({ ...valid, schedule: { kind: "weekly" } }), "schedule.kind must be one of cron, every, at")
    refused(spec({ ...valid, schedule: { kind: "cron" } }), "schedule.expr is required")
    refused(spec({ ...valid, schedule: { kind: "cron", expr: "not a cron" } }), /^schedule\.expr: CronPattern: invalid configuration format/)
    refused(spec({ ...valid, schedule: { kind: "cron", expr: "61 * * * *" } }), /^schedule\.expr: CronPattern: Invalid value for minute: 61/)
    refused(spec({ ...valid, schedule: { kind: "cron", expr: "0 9 * * *", tz: "Mars/Phobos" } }), `schedule.tz "Mars/Phobos" is not a known time zone`)
    refused(spec({ ...valid, schedule: { kind: "cron", expr: "*/30 * * * * *" } }), "schedule.expr fires more often than once a minute")
    refused(spec({ ...valid, schedule: { kind: "cron", expr: "0,1 0 9 * * *" } }), "schedule.expr fires more often than once a minute")
    refused(spec({ ...valid, schedule: { kind: "cron", expr: "0 0 30 2 *" } }), "schedule.expr never fires again")
    refused(spec({ ...valid, schedule: { kind: "cron", expr: "0 0 9 * * * 2020" } }), "schedule.expr never fires again")
    refused(spec({ ...valid, schedule: { kind: "every", everyMs: 59_999 } }), "schedule.everyMs must be a whole number from 60000")
    refused(spec({ ...valid, schedule: { kind: "every", everyMs: "3600000" } }), "schedule.everyMs must be a whole number from 60000")
    refused(spec({ ...valid, schedule: { kind: "every", everyMs: 60_000.5 } }), "schedule.everyMs must be a whole number from 60000")
    refused(spec({ ...valid, schedule: { kind: "every", everyMs: 60_000, staggerMs: -1 } }), "schedule.staggerMs must be a whole number from 0")
    refused(spec({ ...valid, schedule: { kind: "at", at: "tomorrow" } }), "schedule.at must be an ISO 8601 date-time")
    refused(spec({ ...valid, schedule: { kind: "at", at: "2026-13-45T99:00:00Z" } }), "schedule.at must be an ISO 8601 date-time")
    refused(spec({ ...valid, schedule: { kind: "at", at: "2026-11-23T09:59:59Z" } }), "schedule.at must be in the future")
    refused(spec({ ...valid, schedule: { kind: "at", at: now } }), "schedule.at must be in the future")
  })

  it("refuses a missing or malformed payload, and a payload its session cannot run", () => {
    const { payload: _, ...empty } = valid
    refused(spec(empty), "payload is required")
    refused(spec({ ...valid, payload: { kind: "command", argv: ["sh"] } }), "payload.kind must be one of agentTurn, systemEvent")
    refused(spec({ ...valid, payload: { kind: "agentTurn" } }), "payload.text is required")
    refused(spec({ ...valid, payload: { kind: "agentTurn", text: "" } }), "payload.text must not be empty")
    refused(spec({ ...valid, payload: { kind: "agentTurn", text: "x", timeoutSeconds: 0 } }), "payload.timeoutSeconds must be a whole number from 1 to 86400")
    refused(spec({ ...valid, payload: { kind: "systemEvent", text: "x" } }), "payload.message is required")
    refused(spec({ ...valid, sessionTarget: "main" }), "a task on the main session needs a systemEvent payload")
    refused(spec({ ...valid, sessionTarget: "isolated", payload: { kind: "systemEvent", message: "m" } }), "an isolated task needs an agentTurn payload")
  })

  it("refuses malformed optional fields and a body that is no object", () => {
    refused(spec({ ...valid, enabled: "yes" }), "enabled must be true or false")
    refused(spec({ ...valid, sessionTarget: "current" }), "sessionTarget must be one of main, isolated")
    refused(spec({ ...valid, wakeMode: "later" }), "wakeMode must be one of now, next-heartbeat")
    refused(spec({ ...valid, description: "d".repeat(2001) }), "description must be at most 2000 characters")
    refused(spec({ ...valid, delivery: { mode: "email" } }), "delivery.mode must be one of none, announce, webhook")
    refused(spec({ ...valid, delivery: { mode: "webhook" } }), "delivery.to must be an http(s) URL for a webhook")
    refused(spec({ ...valid, delivery: { mode: "webhook", to: "file:///etc/passwd" } }), "delivery.to must be an http(s) URL for a webhook")
    assert.isTrue(Result.isSuccess(spec({ ...valid, delivery: { mode: "webhook", to: "https://example.com/hook" } })))
    for (const body of [null, [], "task", 1]) refused(spec(body), "the body must be a JSON object")
  })
})

describe("a change to a task", () => {
  const current = { sessionTarget: "isolated", payload: { kind: "agentTurn" } }
  it("takes any of the task's fields, each checked as on create", () => {
    assert.deepStrictEqual(ScheduledTask.parsePatch({ name: " new " }, current, now), Result.succeed({ name: "new" }))
    assert.deepStrictEqual(
      ScheduledTask.parsePatch({ schedule: { kind: "every", everyMs: 120_000 }, enabled: false }, current, now),
      Result.succeed({ enabled: false, schedule: { kind: "every" as const, everyMs: 120_000 } })
    )
    refused(ScheduledTask.parsePatch({ schedule: { kind: "every", everyMs: 1000 } }, current, now), "schedule.everyMs must be a whole number from 60000")
    refused(ScheduledTask.parsePatch({ name: "" }, current, now), "name must not be empty")
  })

  it("refuses a change that changes nothing, and one that leaves a payload its session cannot run", () => {
    refused(ScheduledTask.parsePatch({}, current, now), /^nothing to change/)
    refused(ScheduledTask.parsePatch({ unknown: 1 }, current, now), /^nothing to change/)
    refused(ScheduledTask.parsePatch({ payload: { kind: "systemEvent", message: "m" } }, current, now), "an isolated task needs an agentTurn payload")
    assert.isTrue(Result.isSuccess(ScheduledTask.parsePatch({ payload: { kind: "systemEvent", message: "m" }, sessionTarget: "main" }, current, now)))
  })
})

describe("the other inputs", () => {
  it("a toggle needs enabled as a boolean", () => {
    assert.deepStrictEqual(ScheduledTask.parseToggle({ enabled: false }), Result.succeed(false))
    refused(ScheduledTask.parseToggle({ enabled: "false" }), "enabled must be true or false")
    refused(ScheduledTask.parseToggle({}), "enabled must be true or false")
    refused(ScheduledTask.parseToggle(null), "the body is required")
  })

  it("runs' limit defaults to 20, is capped at 100, and must be a whole number from 1", () => {
    assert.deepStrictEqual(ScheduledTask.runsLimit(null), Result.succeed(20))
    assert.deepStrictEqual(ScheduledTask.runsLimit("5"), Result.succeed(5))
    assert.deepStrictEqual(ScheduledTask.runsLimit("1000"), Result.succeed(100))
    for (const raw of ["0", "-1", "2.5", "ten"]) refused(ScheduledTask.runsLimit(raw), "limit must be a whole number from 1")
  })

  it("includeDisabled is true or false, false when absent", () => {
    assert.deepStrictEqual(ScheduledTask.includeDisabled(undefined), Result.succeed(false))
    assert.deepStrictEqual(ScheduledTask.includeDisabled("true"), Result.succeed(true))
    assert.deepStrictEqual(ScheduledTask.includeDisabled("false"), Result.succeed(false))
    refused(ScheduledTask.includeDisabled("maybe"), "includeDisabled must be true or false")
  })

  it("an agent holds at most 20 user tasks; the engine's own jobs do not count", () => {
    const user = (n: number) => Array.from({ length: n }, () => ({ system: false }))
    assert.isTrue(Result.isSuccess(ScheduledTask.checkRoom([...user(19), { system: true }, { system: true }])))
    assert.deepStrictEqual(ScheduledTask.checkRoom(user(20)), Result.fail(new ValidationFailed({ detail: "tasks exceeds maximum of 20" })))
    assert.strictEqual(ScheduledTask.tooMany().message, "Validation failed: tasks exceeds maximum of 20")
  })

  it("documents its refusals with their statuses and strings", () => {
    const cases: Array<[{ status: number; message: string }, number, string]> = [
      [new ScheduledTask.UnknownTask({ taskId: "t" }), 404, "Task not found"],
      [new ScheduledTask.SystemTaskReadOnly({ taskId: "t" }), 403, "System tasks cannot be changed or deleted"],
      [new ScheduledTask.FailedToCreateCronJob({ agentId: "a" }), 500, "Failed to create cron job"],
      [new ScheduledTask.FailedToListCronJobs({ agentId: "a" }), 500, "Failed to list cron jobs"],
      [new ScheduledTask.FailedToReadCronJob({ agentId: "a" }), 500, "Failed to read cron job"],
      [new ScheduledTask.FailedToUpdateCronJob({ agentId: "a" }), 500, "Failed to update cron job"],
      [new ScheduledTask.FailedToDeleteCronJob({ agentId: "a" }), 500, "Failed to delete cron job"],
      [new ScheduledTask.FailedToRunCronJob({ agentId: "a" }), 500, "Failed to run cron job"],
      [new ScheduledTask.FailedToListCronJobRuns({ agentId: "a" }), 500, "Failed to list cron job runs"]
    ]
    for (const [error, status, message] of cases) {
      assert.strictEqual(error.status, status)
      assert.strictEqual(error.message, message)
    }
  })
})
