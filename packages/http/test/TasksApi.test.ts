/**
 * An agent's scheduled tasks (`/v0/agents/{agentId}/tasks…`) through the real routes on the simulated engine, whose
 * cron imitates OpenClaw's (its own jobs on every running gateway; tasks need the gateway running and survive its
 * restarts): every documented status and string, the limit of 20, gateway-token access, and the audit trail.
 */
import { CrashBackoff, Gateway } from "@cairn/application"
import { ApiKit, TestRuntime } from "@cairn/runtime/testing"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect } from "effect"

const { runtime, web, request, workspace, key, control, dispose } = TestRuntime.makeTestApi()

const { expectError } = ApiKit
const { waitForStatus, newAgent: newAgentOf } = ApiKit.make(request)
const invalid = (response: TestRuntime.Reply, reason: string | RegExp) => expectError(response, 400, "Invalid parameters", { reason })

/** A request whose body is sent exactly as given (not JSON-encoded). */
const raw = async (method: string, path: string, token: string, body: string): Promise<TestRuntime.Reply> =>
  TestRuntime.replyOf(await web.handler(new Request(`http://cairn${path}`, { method, headers: { authorization: `Bearer ${token}` }, body })))

type Json = Record<string, any>
const hour = 3_600_000

let owner: string
let agentId: string
const tasksPath = (id = agentId) => `/v0/agents/${id}/tasks`
const list = (query = "", token = owner, id = agentId) => request("GET", `${tasksPath(id)}${query}`, token)
const create = (body: unknown, token = owner, id = agentId) => request("POST", tasksPath(id), token, body)
const taskEvents = async (id = agentId) =>
  ((await request("GET", `/v0/agents/${id}/events`, owner)).body!["events"] as Array<Json>).filter((e) => e["stream"] === `agenttasks-${id}`)

const daily = (name: string) => ({
  name,
  description: "A summary every morning",
  schedule: { kind: "cron", expr: "0 9 * * *", tz: "America/Los_Angeles" },
  payload: { kind: "agentTurn", text: "Summarise yesterday in three lines." }
})

const newAgent = (name: string) => newAgentOf(owner, name)

beforeAll(async () => {
  owner = (await key(await workspace(20))).token
  agentId = await newAgent("scheduler")
}, 120_000)

afterAll(dispose)

describe("listing tasks", () => {
  it("lists the engine's own jobs on a running agent, marked system", async () => {
    const listed = await list("?includeDisabled=true")
    assert.strictEqual(listed.status, 200, JSON.stringify(listed.body))
    assert.deepStrictEqual(Object.keys(listed.body!), ["tasks"])
    const system = (listed.body!["tasks"] as Array<Json>).filter((task) => task["system"] === true)
    assert.isNotEmpty(system, "no job of the engine's own")
    for (const task of system) assert.isString(task["id"])
  })

  it("400 Invalid parameters for an includeDisabled that is neither true nor false", async () => {
    invalid(await list("?includeDisabled=maybe"), "includeDisabled must be true or false")
  })
})

describe("a task's life", () => {
  it("is created (201), read, listed, changed, toggled, run, its runs listed, and deleted; each step recorded for audit", async () => {
    const created = await create(daily("daily-check-in"))
    assert.strictEqual(created.status, 201, JSON.stringify(created.body))
    assert.deepStrictEqual(Object.keys(created.body!).sort(), ["success", "task"])
    assert.strictEqual(created.body!["success"], true)
    const task = created.body!["task"] as Json
    const id = task["id"] as string
    assert.isNotEmpty(id)
    assert.deepInclude(task, { name: "daily-check-in", description: "A summary every morning", enabled: true, system: false })
    assert.deepInclude(task["schedule"], { kind: "cron", expr: "0 9 * * *", tz: "America/Los_Angeles" })
    assert.deepInclude(task["payload"], { kind: "agentTurn", text: "Summarise yesterday in three lines." })
    assert.isString(task["state"].nextRunAt)

    const got = await request("GET", `${tasksPath()}/${id}`, owner)
    assert.strictEqual(got.status, 200, JSON.stringify(got.body))
    assert.deepStrictEqual(Object.keys(got.body!), ["task"])
    assert.deepInclude(got.body!["task"], { id, name: "daily-check-in" })
    assert.isDefined((await list()).body!["tasks"].find((t: Json) => t["id"] === id))

    const changed = await request("PUT", `${tasksPath()}/${id}`, owner, { name: "hourly-check-in", schedule: { kind: "every", everyMs: hour } })
    assert.strictEqual(changed.status, 200, JSON.stringify(changed.body))
    assert.strictEqual(changed.body!["success"], true)
    assert.deepInclude(changed.body!["task"], { id, name: "hourly-check-in", description: "A summary every morning" })
    assert.deepInclude(changed.body!["task"].schedule, { kind: "every", everyMs: hour })
    assert.deepStrictEqual(changed.body!["task"].payload, task["payload"])

    const off = await request("POST", `${tasksPath()}/${id}/toggle`, owner, { enabled: false })
    assert.strictEqual(off.status, 200, JSON.stringify(off.body))
    assert.deepInclude(off.body!["task"], { id, enabled: false })
    assert.isUndefined((await list()).body!["tasks"].find((t: Json) => t["id"] === id), "a disabled task is listed by default")
    assert.isUndefined((await list("?includeDisabled=false")).body!["tasks"].find((t: Json) => t["id"] === id))
    assert.deepInclude((await list("?includeDisabled=true")).body!["tasks"].find((t: Json) => t["id"] === id), { enabled: false })
    const on = await request("POST", `${tasksPath()}/${id}/toggle`, owner, { enabled: true })
    assert.deepInclude(on.body!["task"], { id, enabled: true })

    const ran = await request("POST", `${tasksPath()}/${id}/run`, owner)
    assert.strictEqual(ran.status, 200, JSON.stringify(ran.body))
    assert.strictEqual(ran.body!["success"], true)
    const runId = ran.body!["runId"] as string
    assert.isNotEmpty(runId)
    let runs: Array<Json> = []
    for (let i = 0; i < 200 && runs.length === 0; i++) {
      const got = await request("GET", `${tasksPath()}/${id}/runs`, owner)
      assert.strictEqual(got.status, 200, JSON.stringify(got.body))
      assert.deepStrictEqual(Object.keys(got.body!), ["runs"])
      runs = got.body!["runs"]
      if (runs.length === 0) await new Promise((resolve) => setTimeout(resolve, 10))
    }
    assert.isDefined(runs.find((run) => run["runId"] === runId), JSON.stringify(runs))
    assert.isAtMost((await request("GET", `${tasksPath()}/${id}/runs?limit=1`, owner)).body!["runs"].length, 1)

    const deleted = await request("DELETE", `${tasksPath()}/${id}`, owner)
    assert.strictEqual(deleted.status, 200, JSON.stringify(deleted.body))
    assert.deepStrictEqual(deleted.body, { success: true, message: "Task deleted" })
    expectError(await request("GET", `${tasksPath()}/${id}`, owner), 404, "Task not found")
    assert.isUndefined((await list("?includeDisabled=true")).body!["tasks"].find((t: Json) => t["id"] === id))

    const recorded = (await taskEvents()).filter((e) => e["data"].taskId === id)
    assert.deepStrictEqual(recorded.map((e) => e["type"]), ["TaskCreated", "TaskUpdated", "TaskToggled", "TaskToggled", "TaskRunRequested", "TaskDeleted"])
    for (const event of recorded) assert.strictEqual(event["actor"], "ada")
    const [createdEvent, updatedEvent, offEvent, , runEvent, deletedEvent] = recorded.map((e) => e["data"])
    assert.deepInclude(createdEvent, {
      agentId,
      taskId: id,
      name: "daily-check-in",
      schedule: { kind: "cron", expr: "0 9 * * *", tz: "America/Los_Angeles" },
      payloadKind: "agentTurn",
      enabled: true
    })
    assert.notInclude(JSON.stringify(recorded), "Summarise yesterday", "the payload's text is recorded")
    assert.deepInclude(updatedEvent, { name: "hourly-check-in", fields: ["name", "schedule"], schedule: { kind: "every", everyMs: hour } })
    assert.deepInclude(offEvent, { enabled: false, system: false, name: "hourly-check-in" })
    assert.deepInclude(runEvent, { runId })
    assert.deepInclude(deletedEvent, { name: "hourly-check-in" })
  })

  it("takes every kind of schedule and payload Pinata documents", async () => {
    const at = new Date(Date.now() + 24 * hour).toISOString()
    const reminder = await create({
      name: "reminder",
      enabled: false,
      schedule: { kind: "at", at },
      sessionTarget: "main",
      wakeMode: "next-heartbeat",
      payload: { kind: "systemEvent", message: "Time to water the plants." }
    })
    assert.strictEqual(reminder.status, 201, JSON.stringify(reminder.body))
    assert.deepInclude(reminder.body!["task"], { name: "reminder", enabled: false })
    assert.deepInclude(reminder.body!["task"].payload, { kind: "systemEvent", message: "Time to water the plants." })
    const every = await create({
      name: "poll",
      schedule: { kind: "every", everyMs: 60_000, staggerMs: 0 },
      sessionTarget: "isolated",
      payload: { kind: "agentTurn", text: "Check the inbox.", timeoutSeconds: 300 },
      delivery: { mode: "webhook", to: "https://example.com/hook" }
    })
    assert.strictEqual(every.status, 201, JSON.stringify(every.body))
    // The shorthand a reader of the interface document writes first: a cron string and a plain message.
    const short = await create({ name: "hello", schedule: "*/5 * * * *", payload: "say hello" })
    assert.strictEqual(short.status, 201, JSON.stringify(short.body))
    assert.deepInclude(short.body!["task"].schedule, { kind: "cron", expr: "*/5 * * * *" })
    assert.deepInclude(short.body!["task"].payload, { kind: "agentTurn", text: "say hello" })
    for (const task of [reminder, every, short]) {
      assert.strictEqual((await request("DELETE", `${tasksPath()}/${task.body!["task"].id}`, owner)).status, 200)
    }
  })
})

describe("malformed tasks: 400 Invalid parameters, nothing created or recorded", () => {
  it("refuses a missing or malformed name, schedule or payload, and a body that is not JSON", async () => {
    const before = (await list("?includeDisabled=true")).body!["tasks"].length
    const recorded = (await taskEvents()).length
    const { name: _n, ...nameless } = daily("x")
    const { schedule: _s, ...unscheduled } = daily("x")
    const { payload: _p, ...empty } = daily("x")
    invalid(await create(nameless), "name is required")
    invalid(await create({ ...daily("x"), name: "" }), "name must not be empty")
    invalid(await create(unscheduled), "schedule is required")
    invalid(await create(empty), "payload is required")
    invalid(await create({ ...daily("x"), schedule: { kind: "cron", expr: "not a cron" } }), /^schedule\.expr: CronPattern/)
    invalid(await create({ ...daily("x"), schedule: { kind: "cron", expr: "0 9 * * *", tz: "Mars/Olympus_Mons" } }), /is not a known time zone$/)
    invalid(await create({ ...daily("x"), schedule: { kind: "cron", expr: "*/10 * * * * *" } }), "schedule.expr fires more often than once a minute")
    invalid(await create({ ...daily("x"), schedule: { kind: "every", everyMs: 59_999 } }), "schedule.everyMs must be a whole number from 60000")
    invalid(await create({ ...daily("x"), schedule: { kind: "at", at: "next tuesday" } }), "schedule.at must be an ISO 8601 date-time")
    invalid(await create({ ...daily("x"), schedule: { kind: "at", at: "2020-01-01T00:00:00Z" } }), "schedule.at must be in the future")
    invalid(await create({ ...daily("x"), payload: { kind: "agentTurn" } }), "payload.text is required")
    invalid(await create({ ...daily("x"), payload: { kind: "shell", command: "rm -rf /" } }), "payload.kind must be one of agentTurn, systemEvent")
    invalid(await create({ ...daily("x"), sessionTarget: "main" }), "a task on the main session needs a systemEvent payload")
    invalid(await raw("POST", tasksPath(), owner, "name=daily"), "the request body is not valid JSON")
    invalid(await raw("POST", tasksPath(), owner, ""), "the request body is not valid JSON")
    invalid(await create([daily("x")]), "the body must be a JSON object")
    assert.strictEqual((await list("?includeDisabled=true")).body!["tasks"].length, before)
    assert.strictEqual((await taskEvents()).length, recorded)
  })

  it("refuses a change that is malformed or changes nothing, a toggle without a boolean, and a bad runs limit", async () => {
    const id = (await create(daily("to-change"))).body!["task"].id as string
    const task = `${tasksPath()}/${id}`
    invalid(await request("PUT", task, owner, {}), /^nothing to change/)
    invalid(await request("PUT", task, owner, { name: "  " }), "name must not be empty")
    invalid(await request("PUT", task, owner, { schedule: { kind: "every", everyMs: 1000 } }), "schedule.everyMs must be a whole number from 60000")
    invalid(await request("PUT", task, owner, { payload: { kind: "systemEvent", message: "m" }, sessionTarget: "isolated" }), "an isolated task needs an agentTurn payload")
    invalid(await raw("PUT", task, owner, "{"), "the request body is not valid JSON")
    invalid(await request("POST", `${task}/toggle`, owner, { enabled: "no" }), "enabled must be true or false")
    invalid(await request("POST", `${task}/toggle`, owner, {}), "enabled must be true or false")
    invalid(await request("GET", `${task}/runs?limit=0`, owner), "limit must be a whole number from 1")
    invalid(await request("GET", `${task}/runs?limit=lots`, owner), "limit must be a whole number from 1")
    assert.strictEqual((await request("GET", `${task}/runs?limit=5000`, owner)).status, 200, "a limit over the maximum is capped")
    assert.deepInclude((await request("GET", task, owner)).body!["task"], { name: "to-change", enabled: true })
    assert.strictEqual((await request("DELETE", task, owner)).status, 200)
  })
})

describe("the engine's own jobs", () => {
  it("may be toggled and run, but changing or deleting one is 403", async () => {
    const system = ((await list("?includeDisabled=true")).body!["tasks"] as Array<Json>).find((task) => task["system"] === true)!
    const path = `${tasksPath()}/${system["id"]}`
    expectError(await request("PUT", path, owner, { name: "mine now" }), 403, "System tasks cannot be changed or deleted")
    expectError(await request("DELETE", path, owner), 403, "System tasks cannot be changed or deleted")
    const toggled = await request("POST", `${path}/toggle`, owner, { enabled: !system["enabled"] })
    assert.strictEqual(toggled.status, 200, JSON.stringify(toggled.body))
    assert.deepInclude(toggled.body!["task"], { id: system["id"], enabled: !system["enabled"], system: true, name: system["name"] })
    const back = await request("POST", `${path}/toggle`, owner, { enabled: system["enabled"] })
    assert.strictEqual(back.status, 200, JSON.stringify(back.body))
    const recorded = (await taskEvents()).filter((e) => e["data"].taskId === system["id"])
    assert.deepStrictEqual(recorded.map((e) => [e["type"], e["data"].system, e["data"].enabled]), [
      ["TaskToggled", true, !system["enabled"]],
      ["TaskToggled", true, system["enabled"]]
    ])
    assert.deepInclude((await request("GET", path, owner)).body!["task"], { name: system["name"], system: true })
  })
})

describe("unknown tasks: 404 Task not found", () => {
  it("for every operation on a task id the engine does not have", async () => {
    const path = `${tasksPath()}/no-such-task`
    expectError(await request("GET", path, owner), 404, "Task not found")
    expectError(await request("PUT", path, owner, { name: "x" }), 404, "Task not found")
    expectError(await request("DELETE", path, owner), 404, "Task not found")
    expectError(await request("POST", `${path}/run`, owner), 404, "Task not found")
    expectError(await request("POST", `${path}/toggle`, owner, { enabled: false }), 404, "Task not found")
    expectError(await request("GET", `${path}/runs`, owner), 404, "Task not found")
  })
})

describe("the limit of 20 tasks per agent", () => {
  it("refuses the 21st user task, counting neither the engine's own jobs nor concurrent creates twice", async () => {
    const busy = await newAgent("busy")
    const systemJobs = ((await list("?includeDisabled=true", owner, busy)).body!["tasks"] as Array<Json>).filter((t) => t["system"]).length
    const results = await Promise.all(Array.from({ length: 24 }, (_, i) => create(daily(`task-${i}`), owner, busy)))
    assert.strictEqual(results.filter((r) => r.status === 201).length, 20, JSON.stringify(results.map((r) => r.status)))
    for (const refused of results.filter((r) => r.status !== 201)) expectError(refused, 400, "Validation failed: tasks exceeds maximum of 20")
    const listed = (await list("?includeDisabled=true", owner, busy)).body!["tasks"] as Array<Json>
    assert.strictEqual(listed.filter((t) => !t["system"]).length, 20)
    assert.strictEqual(listed.filter((t) => t["system"]).length, systemJobs)

    // A disabled task still counts; a deleted one makes room.
    const first = listed.find((t) => !t["system"])!
    await request("POST", `${tasksPath(busy)}/${first["id"]}/toggle`, owner, { enabled: false })
    expectError(await create(daily("one-more"), owner, busy), 400, "Validation failed: tasks exceeds maximum of 20")
    assert.strictEqual((await request("DELETE", `${tasksPath(busy)}/${first["id"]}`, owner)).status, 200)
    assert.strictEqual((await create(daily("one-more"), owner, busy)).status, 201)
  })
})

describe("tasks live in the engine", () => {
  it("survive a restart of the agent's gateway", async () => {
    const kept = (await create(daily("kept-across-restart"))).body!["task"] as Json
    const restarted = await request("POST", `/v0/agents/${agentId}/restart`, owner)
    assert.strictEqual(restarted.status, 200, JSON.stringify(restarted.body))
    await waitForStatus(owner, agentId, "running")
    const found = ((await list("?includeDisabled=true")).body!["tasks"] as Array<Json>).find((t) => t["id"] === kept["id"])
    assert.deepInclude(found, { name: "kept-across-restart", enabled: true, system: false })
    assert.strictEqual((await request("DELETE", `${tasksPath()}/${kept["id"]}`, owner)).status, 200)
  })
})

describe("tasks need the agent's gateway running", () => {
  it("while a crashed gateway is down: 500; once the supervisor brought it back, the tasks are there", async () => {
    const id = await newAgent("crashy")
    const kept = (await create(daily("outlives-a-crash"), owner, id)).body!["task"].id as string
    await control((c) => c.crash(id))
    expectError(await list("", owner, id), 500, "Failed to list cron jobs")
    expectError(await create(daily("while-down"), owner, id), 500, "Failed to create cron job")
    expectError(await request("GET", `${tasksPath(id)}/${kept}`, owner), 500, "Failed to read cron job")
    // The supervisor's sweep finds the crash and starts the gateway again after its backoff.
    const backoff = { initial: "100 millis", max: "1 second", stableAfter: "1 minute" } as const
    await runtime.runPromise(Gateway.use((gateway) => gateway.checkRunning).pipe(Effect.provideService(CrashBackoff, backoff)))
    await waitForStatus(owner, id, "running")
    const listed = (await list("?includeDisabled=true", owner, id)).body!["tasks"] as Array<Json>
    assert.deepStrictEqual(listed.filter((t) => !t["system"]).map((t) => t["name"]), ["outlives-a-crash"])
  })
})

describe("who may use an agent's tasks", () => {
  it("the agent's gateway token, whose changes are recorded for the agent's owner; none, a rotated one or another agent's is 401", async () => {
    const token = (await request("GET", `/v0/agents/${agentId}/gateway-token`, owner)).body!["gatewayToken"] as string
    assert.strictEqual((await list("", token)).status, 200)
    const viaQuery = await web.handler(new Request(`http://cairn${tasksPath()}?token=${token}`))
    assert.strictEqual(viaQuery.status, 200)
    const made = await create(daily("by-the-agent"), token)
    assert.strictEqual(made.status, 201, JSON.stringify(made.body))
    const recorded = (await taskEvents()).find((e) => e["data"].taskId === made.body!["task"].id)!
    assert.strictEqual(recorded["actor"], "ada")
    assert.strictEqual((await request("DELETE", `${tasksPath()}/${made.body!["task"].id}`, token)).status, 200)

    expectError(await request("GET", tasksPath()), 401, "Unauthorized", { reason: "missing-credentials" })
    expectError(await request("POST", tasksPath(), undefined, daily("anon")), 401, "Unauthorized", { reason: "missing-credentials" })
    const other = await newAgent("other-scheduler")
    const otherToken = (await request("GET", `/v0/agents/${other}/gateway-token`, owner)).body!["gatewayToken"] as string
    expectError(await list("", otherToken), 401, "Unauthorized", { reason: "stale-gateway-token" })
    await request("POST", `/v0/agents/${other}/gateway-token/rotate`, owner)
    expectError(await list("", otherToken, other), 401, "Unauthorized", { reason: "stale-gateway-token" })
  })

  it("404 Agent not found for an unknown agent or another workspace's", async () => {
    expectError(await list("", owner, "nosuchagent"), 404, "Agent not found")
    expectError(await create(daily("x"), owner, "nosuchagent"), 404, "Agent not found")
    const stranger = (await key(await workspace(1))).token
    expectError(await list("", stranger), 404, "Agent not found")
    expectError(await create(daily("x"), stranger), 404, "Agent not found")
  })
})

describe("engine failures: 500 with each operation's string, the engine's words only in the log", () => {
  it("Failed to list / create / read / update / delete / run cron job(s) / list cron job runs; nothing recorded", async () => {
    const id = await newAgent("unreachable")
    const task = (await create(daily("standing"), owner, id)).body!["task"].id as string
    const recorded = (await taskEvents(id)).length
    const detail = "Gateway not reachable at ws://127.0.0.1:1 (ECONNREFUSED)."
    const at = `${tasksPath(id)}/${task}`
    try {
      await control((c) => c.failTasks(id, detail))
      const cases: Array<[Promise<TestRuntime.Reply>, string]> = [
        [list("?includeDisabled=true", owner, id), "Failed to list cron jobs"],
        [create(daily("late"), owner, id), "Failed to create cron job"],
        [request("GET", at, owner), "Failed to read cron job"],
        [request("PUT", at, owner, { name: "renamed" }), "Failed to update cron job"],
        [request("POST", `${at}/toggle`, owner, { enabled: false }), "Failed to update cron job"],
        [request("DELETE", at, owner), "Failed to delete cron job"],
        [request("POST", `${at}/run`, owner), "Failed to run cron job"],
        [request("GET", `${at}/runs`, owner), "Failed to list cron job runs"]
      ]
      for (const [reply, error] of cases) {
        const response = await reply
        assert.strictEqual(response.status, 500, `${error}: ${JSON.stringify(response.body)}`)
        assert.deepStrictEqual(response.body, { error })
      }
      // Malformed input is still 400 before the engine is asked.
      invalid(await create({ name: "x" }, owner, id), "schedule is required")
    } finally {
      await control((c) => c.clearFailures(id))
    }
    assert.strictEqual((await taskEvents(id)).length, recorded)
    assert.deepInclude((await request("GET", at, owner)).body!["task"], { name: "standing", enabled: true })
  })
})
