/**
 * Cron.ts without a gateway: the mapping between the port's tasks and OpenClaw's cron jobs (on jobs as OpenClaw
 * 2026.9.6 answered them), and the operations against a stand-in for the `cron.*` methods that keeps jobs in memory
 * and refuses what OpenClaw refuses, with its error shapes. OpenClawAgentEngine.int.test.ts (the contract) and
 * Cron.int.test.ts run them on real gateways.
 */
import type { Task } from "@cairn/agent-engine"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Cron from "../src/Cron.ts"
import { GatewayRpcError } from "../src/GatewayRpc.ts"

/** The three jobs a fresh OpenClaw 2026.9.6 gateway declares, as `cron.list` shows them (long texts cut). */
const heartbeat = {
  id: "889efe9b-8e7f-4c8a-8fef-239d1d4a0c13",
  declarationKey: "heartbeat:main",
  displayName: "Heartbeat (main)",
  agentId: "main",
  name: "heartbeat-main",
  enabled: true,
  createdAtMs: 1795450120243,
  updatedAtMs: 1795450120243,
  schedule: { kind: "every", everyMs: 1800000, anchorMs: 1676601 },
  sessionTarget: "main",
  wakeMode: "next-heartbeat",
  payload: { kind: "heartbeat" },
  state: { nextRunAtMs: 1795451276601 },
  configRevision: "sha256:hVAiQX8F7civLBQrZ8lRSxIrCrtWqd0Kl8tntfOZ-Ek",
  nextRunAtMs: 1795451276601,
  effectiveAgentId: "main"
}
const dreaming = {
  id: "778ee604-ca38-4328-b618-9b45e6e4e07c",
  declarationKey: "memory-core:memory-dreaming-promotion",
  name: "Memory Dreaming Promotion",
  description: "[managed-by=memory-core.short-term-promotion] Promote weighted short-term recalls into MEMORY.md (limit=10).",
  enabled: true,
  createdAtMs: 1795450117594,
  schedule: { kind: "cron", expr: "0 3 * * *" },
  sessionTarget: "isolated",
  wakeMode: "now",
  payload: {
    kind: "agentTurn",
    message: "__openclaw_memory_core_short_term_promotion_dream__",
    lightContext: true,
    toolsAllow: ["*"]
  },
  delivery: { mode: "none" },
  scheduledToolPolicy: { version: 1, mode: "trusted" },
  state: { nextRunAtMs: 1795489200000 },
  updatedAtMs: 1795450117594,
  effectiveAgentId: "main"
}
const skillReview = {
  id: "863fe746-3b46-47a2-b316-f1dbf9197acb",
  declarationKey: "skill-collection-review:main",
  displayName: "Skill collection review (main)",
  agentId: "main",
  name: "skill-collection-review-main",
  enabled: true,
  createdAtMs: 1795450120279,
  updatedAtMs: 1795450120279,
  schedule: { kind: "every", everyMs: 604800000, anchorMs: 28676601 },
  sessionTarget: "isolated",
  wakeMode: "next-heartbeat",
  payload: { kind: "agentTurn", message: "Review this agent's Skill Workshop as a collection…", toolsAllow: ["ls", "read"] },
  delivery: { mode: "none" },
  state: { nextRunAtMs: 1795679876601 },
  effectiveAgentId: "main"
}
/** A job created with `cron.add`, after one failed run. */
const userJob = {
  id: "78788944-a1e7-4a29-9416-4295a764c48e",
  name: "t1",
  description: "d",
  enabled: true,
  createdAtMs: 1795450183092,
  updatedAtMs: 1795450183092,
  schedule: { kind: "cron", expr: "0 9 * * *", tz: "UTC" },
  sessionTarget: "isolated",
  wakeMode: "now",
  payload: { kind: "agentTurn", message: "hello", toolsAllow: ["*"] },
  delivery: { mode: "none" },
  state: {
    nextRunAtMs: 1795510800000,
    lastRunAtMs: 1795450240545,
    lastRunStatus: "error",
    lastStatus: "error",
    lastError: "No route-compatible authentication source is configured for openai."
  },
  scheduledToolPolicy: { version: 1, mode: "trusted" },
  configRevision: "sha256:-wW8py719pnmn-VXaH9jmoqY5g0Ysunhb1kOOPeQJt4"
}
/** Its run, as `cron.runs` lists it. */
const runEntry = {
  ts: 1795450258874,
  jobId: userJob.id,
  action: "finished",
  status: "error",
  completionStatus: "failed",
  error: "No route-compatible authentication source is configured for openai.",
  errorReason: "auth",
  runId: `manual:${userJob.id}:1795450240428:1`,
  runAtMs: 1795450240545,
  durationMs: 18329,
  nextRunAtMs: 1795510800000,
  deliveryStatus: "not-requested",
  jobName: "t1"
}

describe("Cron mapping", () => {
  it("reads a user's job as a task: OpenClaw's message is the text, its times ISO strings", () => {
    assert.deepStrictEqual(Cron.taskFromJob(userJob), {
      id: userJob.id,
      name: "t1",
      description: "d",
      enabled: true,
      schedule: { kind: "cron", expr: "0 9 * * *", tz: "UTC" },
      sessionTarget: "isolated",
      wakeMode: "now",
      payload: { kind: "agentTurn", text: "hello" },
      delivery: { mode: "none" },
      system: false,
      state: {
        nextRunAt: "2026-11-24T09:00:00.000Z",
        lastRunAt: "2026-11-23T16:10:40.545Z",
        lastStatus: "error"
      }
    } satisfies Task)
  })

  it("marks the engine's own jobs as system tasks, and keeps a heartbeat's payload as the engine's own kind", () => {
    const tasks = [heartbeat, dreaming, skillReview].map(Cron.taskFromJob)
    assert.deepStrictEqual(tasks.map((task) => task?.system), [true, true, true])
    assert.deepStrictEqual(tasks[0]?.payload, { kind: "heartbeat" })
    assert.deepStrictEqual(tasks[0]?.schedule, { kind: "every", everyMs: 1800000, anchorMs: 1676601 })
  })

  it("takes no user's job for a system job: neither a declaration key alone nor a managed-by tag alone", () => {
    assert.isFalse(Cron.isSystemJob(userJob))
    assert.isFalse(Cron.isSystemJob({ ...userJob, declarationKey: "my-own-key" }))
    assert.isFalse(Cron.isSystemJob({ ...userJob, description: "[managed-by=me] not really" }))
    assert.isTrue(Cron.isSystemJob({ ...userJob, declarationKey: "heartbeat-task:main:x" }))
    assert.isTrue(Cron.isSystemJob({ ...userJob, payload: { kind: "heartbeat" } }))
  })

  it("reads a system event's text as the port's message, and refuses what is no job", () => {
    const job = { ...userJob, sessionTarget: "main", payload: { kind: "systemEvent", text: "wake up" } }
    assert.deepStrictEqual(Cron.taskFromJob(job)?.payload, { kind: "systemEvent", message: "wake up" })
    assert.isUndefined(Cron.taskFromJob({ ...userJob, id: undefined }))
    assert.isUndefined(Cron.taskFromJob({ ...userJob, enabled: "yes" }))
    assert.isUndefined(Cron.taskFromJob([userJob]))
  })

  it("reads a run: started at runAtMs, finished at ts", () => {
    assert.deepStrictEqual(Cron.runFromEntry(runEntry), {
      runId: runEntry.runId,
      status: "error",
      startedAt: "2026-11-23T16:10:40.545Z",
      finishedAt: "2026-11-23T16:10:58.874Z",
      durationMs: 18329,
      error: "No route-compatible authentication source is configured for openai."
    })
  })

  it("adds with the defaults OpenClaw needs: an isolated agent turn started now and delivered nowhere", () => {
    assert.deepStrictEqual(
      Cron.addParams({
        name: "daily",
        schedule: { kind: "cron", expr: "0 9 * * *", tz: "Europe/Paris" },
        payload: { kind: "agentTurn", text: "Summarise", model: "anthropic/claude", timeoutSeconds: 60 }
      }),
      {
        name: "daily",
        enabled: true,
        schedule: { kind: "cron", expr: "0 9 * * *", tz: "Europe/Paris" },
        sessionTarget: "isolated",
        wakeMode: "now",
        payload: { kind: "agentTurn", message: "Summarise", model: "anthropic/claude", timeoutSeconds: 60 },
        delivery: { mode: "none" }
      }
    )
  })

  it("adds a system event to the main session (the only one OpenClaw runs it in), keeping what is asked for", () => {
    assert.deepStrictEqual(
      Cron.addParams({
        name: "ping",
        description: "nudges",
        enabled: false,
        schedule: { kind: "at", at: "2026-12-01T12:00:00.000Z" },
        wakeMode: "next-heartbeat",
        payload: { kind: "systemEvent", message: "ping" },
        delivery: { mode: "announce", channel: "telegram", to: "123", bestEffort: true }
      }),
      {
        name: "ping",
        description: "nudges",
        enabled: false,
        schedule: { kind: "at", at: "2026-12-01T12:00:00.000Z" },
        sessionTarget: "main",
        wakeMode: "next-heartbeat",
        payload: { kind: "systemEvent", text: "ping" },
        delivery: { mode: "announce", channel: "telegram", to: "123", bestEffort: true }
      }
    )
  })

  it("patches only what changes; a payload or delivery given replaces the stored one whole", () => {
    const current = Cron.taskFromJob(userJob)!
    assert.deepStrictEqual(Cron.updatePatch({ enabled: false }, current), { enabled: false })
    assert.deepStrictEqual(Cron.updatePatch({ payload: { kind: "agentTurn", text: "again" } }, current), {
      payload: { kind: "agentTurn", message: "again", model: null, thinking: null, timeoutSeconds: null }
    })
    assert.deepStrictEqual(Cron.updatePatch({ delivery: { mode: "none" } }, current), {
      delivery: { mode: "none", channel: null, to: null }
    })
    // An isolated agent turn that becomes a system event moves to the main session.
    assert.deepStrictEqual(Cron.updatePatch({ payload: { kind: "systemEvent", message: "now" } }, current), {
      sessionTarget: "main",
      payload: { kind: "systemEvent", text: "now" }
    })
  })
})

/**
 * A stand-in for the gateway's `cron.*` methods: jobs in memory, OpenClaw's answers and refusals (an unknown id with
 * `details.code` CRON_JOB_NOT_FOUND, system monitors not editable), and a log of every call.
 */
const standIn = (jobs: Array<Record<string, any>>, runs: Record<string, Array<unknown>> = {}) => {
  const calls: Array<{ readonly method: string; readonly params: any }> = []
  let next = 0
  const notFound = (id: string) =>
    new GatewayRpcError("INVALID_REQUEST", `Automation not found: ${id}.`, { code: "CRON_JOB_NOT_FOUND", jobId: id })
  const find = (id: string) => jobs.find((job) => job["id"] === id)
  const answer = (method: string, params: any): unknown => {
    switch (method) {
      case "cron.list": {
        const visible = jobs.filter((job) => params.includeDisabled || job["enabled"])
        const page = visible.slice(params.offset ?? 0, (params.offset ?? 0) + (params.limit ?? visible.length))
        const nextOffset = (params.offset ?? 0) + page.length
        const hasMore = nextOffset < visible.length
        return { jobs: page, total: visible.length, offset: params.offset ?? 0, hasMore, nextOffset: hasMore ? nextOffset : null }
      }
      case "cron.get":
        return find(params.id) ?? notFound(params.id)
      case "cron.add": {
        if (params.payload.kind === "systemEvent" && params.sessionTarget !== "main") {
          return new GatewayRpcError("INVALID_REQUEST", "invalid cron.add params: main cron jobs require payload.kind=\"systemEvent\"")
        }
        const job = { ...params, id: `job-${next++}`, createdAtMs: 1, updatedAtMs: 1, state: { nextRunAtMs: 1795510800000 } }
        jobs.push(job)
        return job
      }
      case "cron.update": {
        const job = find(params.id)
        if (job === undefined) return notFound(params.id)
        if (String(job["declarationKey"]).startsWith("heartbeat:")) {
          return new GatewayRpcError("UNAVAILABLE", "Error: system-owned monitor jobs cannot be edited by cron clients")
        }
        Object.assign(job, params.patch)
        return job
      }
      case "cron.remove": {
        const index = jobs.findIndex((job) => job["id"] === params.id)
        if (index < 0) return notFound(params.id)
        jobs.splice(index, 1)
        return { ok: true, removed: true }
      }
      case "cron.run":
        return find(params.id) === undefined ? notFound(params.id) : { ok: true, enqueued: true, runId: `manual:${params.id}:1` }
      case "cron.runs":
        return find(params.id) === undefined
          ? notFound(params.id)
          : { entries: (runs[params.id] ?? []).slice(0, params.limit), total: (runs[params.id] ?? []).length }
      default:
        return new GatewayRpcError("INVALID_REQUEST", `unknown method: ${method}`)
    }
  }
  const call: Cron.Call = (method, params) =>
    Effect.suspend(() => {
      calls.push({ method, params })
      const result = answer(method, params)
      return result instanceof GatewayRpcError ? Effect.fail(result) : Effect.succeed(structuredClone(result))
    })
  return { call, calls }
}

describe("Cron operations", () => {
  const agentId = "agent-1"

  it.effect("lists every page, and passes includeDisabled on", () =>
    Effect.gen(function*() {
      const many = Array.from({ length: 450 }, (_, index) => ({ ...userJob, id: `job-${index}`, enabled: index % 2 === 0 }))
      const { call, calls } = standIn(many)
      const all = yield* Cron.make(agentId, call).list(true)
      assert.deepStrictEqual(all.map((task) => task.id), many.map((job) => job.id))
      assert.deepStrictEqual(calls.map((entry) => entry.params.offset), [0, 200, 400])
      const enabled = yield* Cron.make(agentId, call).list(false)
      assert.strictEqual(enabled.length, 225)
      assert.isTrue(enabled.every((task) => task.enabled))
    }))

  it.effect("tells an unknown task from a failing engine", () =>
    Effect.gen(function*() {
      const { call } = standIn([userJob])
      const cron = Cron.make(agentId, call)
      assert.deepInclude(yield* Effect.flip(cron.get("nope")), { _tag: "TaskNotFound", agentId, taskId: "nope" })
      assert.deepInclude(yield* Effect.flip(cron.runs("nope", 5)), { _tag: "TaskNotFound", taskId: "nope" })
      assert.deepInclude(yield* Effect.flip(cron.run("nope")), { _tag: "TaskNotFound", taskId: "nope" })
      // Ids OpenClaw never gives are not sent at all.
      assert.deepInclude(yield* Effect.flip(cron.runs("../etc", 5)), { _tag: "TaskNotFound", taskId: "../etc" })
      assert.deepInclude(yield* Effect.flip(cron.get(" ")), { _tag: "TaskNotFound" })

      const down: Cron.Call = () => Effect.fail(new GatewayRpcError("UNAVAILABLE", "the gateway of agent agent-1 is not running (stopped)"))
      assert.deepInclude(yield* Effect.flip(Cron.make(agentId, down).get(userJob.id)), {
        _tag: "TasksFailed",
        agentId,
        detail: "the gateway of agent agent-1 is not running (stopped)"
      })
      const refusing = standIn([])
      const refused = yield* Effect.flip(
        Cron.make(agentId, refusing.call).add({
          name: "x",
          sessionTarget: "isolated",
          schedule: { kind: "every", everyMs: 60_000 },
          payload: { kind: "systemEvent", message: "x" }
        })
      )
      assert.deepInclude(refused, { _tag: "TasksFailed", agentId })
      assert.include((refused as { readonly detail: string }).detail, "main cron jobs require")
    }))

  it.effect("adds, changes, runs and removes a user's task", () =>
    Effect.gen(function*() {
      const { call, calls } = standIn([heartbeat], { "job-0": [runEntry, { ...runEntry, runId: "older" }] })
      const cron = Cron.make(agentId, call)
      const added = yield* cron.add({
        name: "daily",
        schedule: { kind: "every", everyMs: 3_600_000 },
        payload: { kind: "agentTurn", text: "go" }
      })
      assert.deepInclude(added, { id: "job-0", name: "daily", enabled: true, system: false })
      assert.deepStrictEqual(added.payload, { kind: "agentTurn", text: "go" })

      const renamed = yield* cron.update("job-0", { name: "hourly" })
      assert.strictEqual(renamed.name, "hourly")
      assert.deepStrictEqual(calls.at(-1), { method: "cron.update", params: { id: "job-0", patch: { name: "hourly" } } })
      const unchanged = yield* cron.update("job-0", {})
      assert.strictEqual(unchanged.name, "hourly")
      assert.strictEqual(calls.at(-1)?.method, "cron.get", "an empty change was sent")

      assert.deepStrictEqual(yield* cron.run("job-0"), { runId: "manual:job-0:1" })
      assert.deepStrictEqual(calls.at(-1), { method: "cron.run", params: { id: "job-0", mode: "force" } })
      assert.deepStrictEqual((yield* cron.runs("job-0", 1)).map((run) => run.runId), [runEntry.runId])
      assert.deepStrictEqual(calls.at(-1)?.params, { id: "job-0", limit: 1, sortDir: "desc" })
      assert.deepStrictEqual(yield* cron.runs("job-0", 0), [])

      yield* cron.remove("job-0")
      assert.deepInclude(yield* Effect.flip(cron.get("job-0")), { _tag: "TaskNotFound" })
    }))

  it.effect("protects system tasks: no removal and no change but `enabled`, which the engine may refuse itself", () =>
    Effect.gen(function*() {
      const { call, calls } = standIn([heartbeat, dreaming])
      const cron = Cron.make(agentId, call)
      for (const job of [heartbeat, dreaming]) {
        const protectedTask = { _tag: "SystemTaskProtected", agentId, taskId: job.id } as const
        assert.deepInclude(yield* Effect.flip(cron.remove(job.id)), protectedTask)
        assert.deepInclude(yield* Effect.flip(cron.update(job.id, { name: "mine" })), protectedTask)
        assert.deepInclude(yield* Effect.flip(cron.update(job.id, { enabled: false, description: "x" })), protectedTask)
      }
      assert.isFalse(calls.some((entry) => entry.method === "cron.remove" || entry.method === "cron.update"))

      assert.deepInclude(yield* cron.update(dreaming.id, { enabled: false }), { enabled: false, system: true })
      // OpenClaw refuses to toggle its monitors: refused as the port refuses any other change to a system task.
      assert.deepInclude(yield* Effect.flip(cron.update(heartbeat.id, { enabled: false })), {
        _tag: "SystemTaskProtected",
        taskId: heartbeat.id
      })
    }))
})
