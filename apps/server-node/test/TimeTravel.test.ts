/**
 * Time travel on a real server with the simulated engine: an agent changed step by step through the API (profile,
 * secret value, domain, channel, runtime config, task), then asked `?at=` each step's log position (from its
 * history) and a time: each answer is what the route answered then, in the same shape; the last position gives what
 * the routes give now, with a snapshot kept every 3 events (so most travels start from one). A bad `at` is 400, a time before the agent 404, and after its delete only the times before it
 * answer. `cli audit --agent <id> --at <point>` prints it. No secret value nor token in any answer.
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { cli, cliResult, type ServerProcess, startServer, waitUntilServing } from "../src/testing/index.ts"

const dataDir = mkdtempSync(join(tmpdir(), "cairn-timetravel-"))
// A master key of its own: on PostgreSQL there is no data directory key by default.
const env = {
  DATA_DIR: dataDir,
  ENGINE: "simulated",
  SIMULATED_START_DELAY: "50 millis",
  APPS_DOMAIN: "apps.test",
  // A snapshot every 3 events folded: the later travels start from snapshots, which must not change an answer.
  TIME_TRAVEL_SNAPSHOT_EVERY: "3",
  SECRETS_MASTER_KEY: btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))))
}
const secretValue = `sk-timetravel-${crypto.randomUUID()}`
const telegram = "987654321:AAFakeTelegramTokenForCairnTest0123"
let server: ServerProcess | undefined

afterAll(async () => {
  if (server !== undefined && server.child.exitCode === null) {
    server.child.kill("SIGTERM")
    await server.exited
  }
  rmSync(dataDir, { recursive: true, force: true })
})

describe("time travel through the HTTP API", () => {
  it("answers each route as it was at each step, by log position and by time, and the CLI prints it", async () => {
    server = await startServer(env)
    await waitUntilServing(server)
    const ops = { url: server.url, dataDir }
    const workspaceId = cli(ops, "workspace", "create", "--name", "TimeTravel", "--plan", "pro", "--agent-limit", "2")
    const token = cli(ops, "key", "create", "--workspace", workspaceId, "--user", "ada", "--scopes", "org:agents")
    const bodies: Array<string> = []
    const call = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(`${server!.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}` },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
      const text = await response.text()
      bodies.push(text)
      return { status: response.status, body: text === "" ? undefined : JSON.parse(text) }
    }
    const ok = async (method: string, path: string, body?: unknown) => {
      const answer = await call(method, path, body)
      assert.isTrue(answer.status >= 200 && answer.status < 300, `${method} ${path}: ${answer.status} ${JSON.stringify(answer.body)}`)
      return answer.body
    }
    /**
     * What each time-travelling route answers now; `provisioning` and `limits` are the engine's, not the log's. Tasks
     * and config are the engine's too (its own system tasks, the config's values): checked on their own below.
     */
    const routes = ["", "/skills", "/domains", "/channels"]
    const now = async (agentId: string) => {
      const answers: Array<unknown> = []
      for (const route of routes) {
        const { provisioning: _p, limits: _l, ...body } = await ok("GET", `/v0/agents/${agentId}${route}`)
        answers.push(body)
      }
      return answers
    }
    const at = async (agentId: string, point: string) => {
      const answers: Array<unknown> = []
      for (const route of routes) {
        answers.push(await ok("GET", `/v0/agents/${agentId}${route}?at=${encodeURIComponent(point)}`))
      }
      return answers
    }
    const lastPosition = async (agentId: string) => {
      const { events } = await ok("GET", `/v0/agents/${agentId}/events`) as { events: Array<{ position: string; at: string }> }
      assert.match(events.at(-1)!.position, /^\d+:\d+$/)
      return events.at(-1)!
    }
    /** Waits until the agent's gateway runs (a channel change restarts it). */
    const running = async (agentId: string) => {
      for (let i = 0; i < 100; i++) {
        if ((await ok("GET", `/v0/agents/${agentId}`)).agent.status === "running") return
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
      assert.fail("the agent never ran")
    }

    const beforeAll = new Date().toISOString()
    await new Promise((resolve) => setTimeout(resolve, 5))
    const secret = (await ok("POST", "/v0/secrets", { name: "OPENAI_API_KEY", value: secretValue })).secret as { id: string }
    const agentId = (await ok("POST", "/v0/agents", { name: "first", secretIds: [secret.id] })).agent.agentId as string
    await running(agentId)

    // Each step: a change through the API, then what the routes answer, the agent's last event's position (its
    // history holds the agent's own streams; a secret's value change is on the secret's) and the time.
    const steps: Array<{ readonly position: string; readonly time: string; readonly answers: Array<unknown> }> = []
    const record = async () => {
      const last = await lastPosition(agentId)
      const time = new Date().toISOString()
      steps.push({ position: last.position, time, answers: await now(agentId) })
    }
    await record()
    await ok("PATCH", `/v0/agents/${agentId}`, { name: "second", emoji: "🦀" })
    await record()
    await ok("PUT", `/v0/secrets/${secret.id}`, { value: `${secretValue}-changed` })
    await record()
    await ok("POST", `/v0/agents/${agentId}/domains`, { subdomain: "crab", targetPort: 3000 })
    await record()
    await ok("POST", `/v0/agents/${agentId}/channels/telegram`, { botToken: telegram, dmPolicy: "pairing", allowFrom: ["123456"] })
    await running(agentId)
    await record()
    const written = await ok("PUT", `/v0/agents/${agentId}/config`, { config: { ...(await ok("GET", `/v0/agents/${agentId}/config`)).config, ui: { seamColor: "#00ff00" } } })
    await record()
    const task = await ok("POST", `/v0/agents/${agentId}/tasks`, { name: "digest", schedule: { kind: "every", everyMs: 3_600_000 }, payload: { kind: "systemEvent", message: "tick" } })
    await record()
    // A snapshot of its workspace: `lastSync` and `snapshotCid` from then on, null before.
    const synced = await ok("POST", `/v0/agents/${agentId}/snapshots/sync`)
    await record()
    assert.strictEqual((steps.at(-1)!.answers[0] as any).agent.snapshotCid, synced.snapshotCid ?? synced.snapshot?.snapshotCid)
    assert.isNull((steps.at(-2)!.answers[0] as any).agent.lastSync)

    // The secret's step changed no route but the held secret's version and `synced`.
    assert.deepStrictEqual(
      [(steps[1]!.answers[0] as any).secrets[0].version, (steps[2]!.answers[0] as any).secrets[0].version, (steps[2]!.answers[0] as any).secrets[0].synced],
      [1, 2, false]
    )
    // Each step's time and position give what the routes answered then (an event of a later step is not in it).
    for (const [i, step] of steps.entries()) {
      assert.deepStrictEqual(await at(agentId, step.time), step.answers, `step ${i} at ${step.time}`)
      if (i !== 2) assert.deepStrictEqual(await at(agentId, step.position), step.answers, `step ${i} by position ${step.position}`)
    }
    // The secret's new value is on its own stream, after the agent's last event then: by that position, version 1.
    assert.deepStrictEqual(await at(agentId, steps[2]!.position), steps[1]!.answers)

    // Config: the hash written through Cairn, never a value; nothing before the write.
    assert.deepStrictEqual((await ok("GET", `/v0/agents/${agentId}/config?at=${steps[4]!.position}`)), { config: null, hash: null, writtenAt: null, changedPaths: [] })
    assert.deepInclude(await ok("GET", `/v0/agents/${agentId}/config?at=${steps[5]!.position}`), { config: null, hash: written.hash, changedPaths: ["ui"] })
    // Tasks: what Cairn recorded, the payload by its kind.
    assert.deepStrictEqual((await ok("GET", `/v0/agents/${agentId}/tasks?at=${steps[6]!.position}`)).tasks, [{
      id: task.task.id, name: "digest", enabled: true, schedule: { kind: "every", everyMs: 3_600_000 }, payload: { kind: "systemEvent" }, system: false, state: {}
    }])

    // Bad points: 400; before the agent: 404.
    for (const bad of ["yesterday", "12", "2026-11-28T10:00:00"]) {
      const answer = await call("GET", `/v0/agents/${agentId}?at=${encodeURIComponent(bad)}`)
      assert.strictEqual(answer.status, 400, bad)
      assert.match(answer.body.error, /^Validation failed: at must be an ISO time/)
    }
    assert.deepStrictEqual(await call("GET", `/v0/agents/${agentId}?at=${beforeAll}`), { status: 404, body: { error: "Agent not found" } })
    assert.deepStrictEqual(await call("GET", `/v0/agents/${agentId}/domains?at=${beforeAll}`), { status: 404, body: { error: "Agent not found" } })

    // The operator's CLI prints the agent at a point.
    const printed = cliResult(ops, "audit", "--agent", agentId, "--at", steps[2]!.time)
    assert.strictEqual(printed.status, 0, printed.stderr)
    assert.match(printed.stdout, new RegExp(`^agent\\t${agentId}\\tsecond\\tworkspace ${workspaceId}\\t`, "m"))
    assert.match(printed.stdout, /^secret\tOPENAI_API_KEY\tversion 2\tnot synced$/m)
    assert.notMatch(printed.stdout, /^domain/m)
    const later = cliResult(ops, "audit", "--agent", agentId, "--at", steps.at(-1)!.position)
    assert.match(later.stdout, /^domain\tcrab\tactive\tport 3000$/m)
    assert.match(later.stdout, /^channel\ttelegram\tenabled$/m)
    assert.match(later.stdout, /^task\t.+\tdigest\tevery\tenabled$/m)
    const history = cliResult(ops, "audit", "--agent", agentId)
    assert.include(history.stdout, `@${steps[1]!.position}\tAgentProfileChanged`)

    // After a delete: gone now, there before it.
    await ok("DELETE", `/v0/agents/${agentId}`)
    assert.strictEqual((await call("GET", `/v0/agents/${agentId}`)).status, 404)
    assert.strictEqual((await call("GET", `/v0/agents/${agentId}?at=${new Date().toISOString()}`)).status, 404)
    assert.deepStrictEqual(await at(agentId, steps.at(-1)!.position), steps.at(-1)!.answers)
    assert.strictEqual(cliResult(ops, "audit", "--agent", agentId, "--at", new Date().toISOString()).status, 1)

    // Another workspace never sees it, at any point.
    const otherWorkspace = cli(ops, "workspace", "create", "--name", "Other")
    const otherToken = cli(ops, "key", "create", "--workspace", otherWorkspace, "--user", "eve", "--scopes", "org:agents")
    const other = await fetch(`${server.url}/v0/agents/${agentId}?at=${steps[1]!.position}`, { headers: { authorization: `Bearer ${otherToken}` } })
    assert.strictEqual(other.status, 404)

    // No secret value nor token in any answer.
    for (const body of bodies) {
      assert.notInclude(body, secretValue)
      assert.notInclude(body, telegram)
    }
  }, 120_000)
})
