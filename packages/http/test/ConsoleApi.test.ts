/**
 * An agent's console (`POST /v0/agents/{agentId}/console/exec`) through the real routes on the simulated engine:
 * results for any exit code, the time and output limits, every documented refusal, gateway-token access, and the
 * audit trail, which records each command and how it ended but never what it printed.
 */
import { ApiKit, TestRuntime } from "@cairn/runtime/testing"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"

// Short limits so the timeout and the output cap are quick to reach.
const limits = { consoleTimeoutMs: 400, consoleMaxOutputBytes: 1000 }
const { web, request, workspace, key, control, dispose } = TestRuntime.makeTestApi({ workspaceLimits: limits })

const { expectError } = ApiKit
const { waitForStatus } = ApiKit.make(request)

const secretValue = "sk-console-secret-0a1b2c3d4e5f"
let owner: string
let agentId: string
const exec = (body: unknown, token = owner, id = agentId) => request("POST", `/v0/agents/${id}/console/exec`, token, body)

beforeAll(async () => {
  owner = (await key(await workspace(10))).token
  const secret = await request("POST", "/v0/secrets", owner, { name: "CONSOLE_TOKEN", value: secretValue })
  assert.strictEqual(secret.status, 201, JSON.stringify(secret.body))
  const created = await request("POST", "/v0/agents", owner, { name: "shell", secretIds: [secret.body!["secret"].id] })
  assert.strictEqual(created.status, 201, JSON.stringify(created.body))
  agentId = created.body!["agent"].agentId
  await waitForStatus(owner, agentId, "running")
}, 120_000)

afterAll(dispose)

describe("console exec", () => {
  it("answers 200 with both streams, the exit code, the command and its timing, for any exit code", async () => {
    const before = Date.now()
    const ran = await exec({ command: "echo hello world; echo oops >&2; exit 3" })
    assert.strictEqual(ran.status, 200, JSON.stringify(ran.body))
    const body = ran.body!
    assert.deepStrictEqual(Object.keys(body).sort(), ["command", "durationMs", "exitCode", "stderr", "stdout", "timedOut", "timestamp", "truncated"])
    assert.strictEqual(body["stdout"], "hello world\n")
    assert.strictEqual(body["stderr"], "oops\n")
    assert.strictEqual(body["exitCode"], 3)
    assert.strictEqual(body["command"], "echo hello world; echo oops >&2; exit 3")
    assert.strictEqual(body["truncated"], false)
    assert.strictEqual(body["timedOut"], false)
    assert.isTrue(Number.isInteger(body["durationMs"]) && body["durationMs"] >= 0, String(body["durationMs"]))
    assert.strictEqual(new Date(body["timestamp"]).toISOString(), body["timestamp"])
    assert.isAtLeast(Date.parse(body["timestamp"]), before - 1000)

    const succeeded = await exec({ command: "true && echo done" })
    assert.deepInclude(succeeded.body, { stdout: "done\n", stderr: "", exitCode: 0 })
    const failed = await exec({ command: "false && echo never" })
    assert.deepInclude(failed.body, { stdout: "", exitCode: 1 })
    const unknown = await exec({ command: "nosuchcommand" })
    assert.strictEqual(unknown.status, 200)
    assert.strictEqual(unknown.body!["exitCode"], 127)
    assert.match(unknown.body!["stderr"], /nosuchcommand: not found/)
  })

  it("runs in the workspace, or in a directory inside it given as cwd", async () => {
    const workspacePath = ((await exec({ command: "pwd" })).body!["stdout"] as string).trim()
    assert.isTrue(workspacePath.startsWith("/"), workspacePath)
    await control((c) => c.editWorkspaceFile(agentId, "notes/today.md", new TextEncoder().encode("# today\n")))
    const inside = await exec({ command: "pwd; ls", cwd: "notes" })
    assert.strictEqual(inside.status, 200, JSON.stringify(inside.body))
    assert.strictEqual(inside.body!["stdout"], `${workspacePath}/notes\ntoday.md\n`)
    const absolute = await exec({ command: "cat today.md", cwd: `${workspacePath}/notes` })
    assert.strictEqual(absolute.body!["stdout"], "# today\n")
    assert.strictEqual((await exec({ command: "pwd", cwd: null })).body!["stdout"], `${workspacePath}\n`)
  })

  it("runs with the agent's environment, its secrets included", async () => {
    const printed = await exec({ command: "printenv CONSOLE_TOKEN" })
    assert.strictEqual(printed.body!["stdout"], `${secretValue}\n`)
  })

  it("kills a command at the timeout and says so", async () => {
    const started = Date.now()
    const slow = await exec({ command: "echo started; sleep 30; echo never" })
    assert.strictEqual(slow.status, 200, JSON.stringify(slow.body))
    assert.strictEqual(slow.body!["timedOut"], true)
    assert.strictEqual(slow.body!["exitCode"], 137)
    assert.strictEqual(slow.body!["stdout"], "started\n")
    assert.isAtLeast(slow.body!["durationMs"], limits.consoleTimeoutMs - 50)
    assert.isBelow(Date.now() - started, 10_000)
  })

  it("keeps each stream up to the output limit and says it was cut", async () => {
    const big = await exec({ command: "head -c 5000 /dev/zero" })
    assert.strictEqual(big.status, 200)
    assert.strictEqual(big.body!["truncated"], true)
    assert.strictEqual(big.body!["stdout"], "\0".repeat(limits.consoleMaxOutputBytes))
    const fits = await exec({ command: "head -c 1000 /dev/zero" })
    assert.strictEqual(fits.body!["truncated"], false)
    assert.strictEqual((fits.body!["stdout"] as string).length, 1000)
  })

  it("400 Invalid command for an empty, missing or non-string command, and for a cwd that is malformed or outside", async () => {
    for (const body of [{}, { command: "" }, { command: "   " }, { command: 42 }, { command: ["ls"] }, { command: null }, [], "ls", { cwd: "." }]) {
      expectError(await exec(body), 400, "Invalid command")
    }
    expectError(await exec({ command: "echo a\u0000b" }), 400, "Invalid command")
    for (const cwd of ["", 7, ["notes"], "../..", "..", "/", "/etc", "notes/../../..", "does-not-exist"]) {
      expectError(await exec({ command: "pwd", cwd }), 400, "Invalid command")
    }
  })

  it("500 Execution failed when the command cannot be started, recorded as not run", async () => {
    await control((c) => c.failExec(agentId, "sandbox could not be set up"))
    try {
      expectError(await exec({ command: "echo never" }), 500, "Execution failed")
    } finally {
      await control((c) => c.clearFailures(agentId))
    }
    const events = (await request("GET", `/v0/agents/${agentId}/events`, owner)).body!["events"] as Array<{ type: string; data: Record<string, unknown> }>
    assert.deepInclude(events.at(-1)!, { type: "ConsoleCommandNotRun" })
    assert.deepInclude(events.at(-1)!.data, { command: "echo never", reason: "start-failed" })
    assert.strictEqual((await exec({ command: "echo again" })).body!["stdout"], "again\n")
  })

  it("hands the engine the configured limits", async () => {
    await exec({ command: "true", cwd: "notes" })
    const last = (await control((c) => c.execLog(agentId))).at(-1)
    assert.deepStrictEqual(last, { command: "true", cwd: "notes", timeoutMs: limits.consoleTimeoutMs, maxOutputBytes: limits.consoleMaxOutputBytes })
  })

  it("404 for an unknown agent or another workspace's, 401 without credentials", async () => {
    expectError(await exec({ command: "pwd" }, owner, "nosuchagent"), 404, "Agent not found")
    const stranger = (await key(await workspace(1))).token
    expectError(await exec({ command: "pwd" }, stranger), 404, "Agent not found")
    assert.strictEqual((await request("POST", `/v0/agents/${agentId}/console/exec`, undefined, { command: "pwd" })).status, 401)
  })

  it("takes the agent's gateway token, as a bearer token or ?token=", async () => {
    const gatewayToken = (await request("GET", `/v0/agents/${agentId}/gateway-token`, owner)).body!["gatewayToken"] as string
    assert.deepInclude((await exec({ command: "echo via gateway" }, gatewayToken)).body, { stdout: "via gateway\n", exitCode: 0 })
    const response = await web.handler(new Request(`http://cairn/v0/agents/${agentId}/console/exec?token=${gatewayToken}`, {
      method: "POST",
      body: JSON.stringify({ command: "echo via query" })
    }))
    assert.strictEqual(response.status, 200)
    assert.strictEqual((await response.json() as { stdout: string }).stdout, "via query\n")
    // Another agent's gateway token does not open this agent's console.
    const other = (await request("POST", "/v0/agents", owner, { name: "other" })).body!["agent"].agentId as string
    const otherToken = (await request("GET", `/v0/agents/${other}/gateway-token`, owner)).body!["gatewayToken"] as string
    assert.strictEqual((await exec({ command: "pwd" }, otherToken)).status, 401)
  })

  it("records every command, with where and how it ended and who ran it, never its output", async () => {
    const stranger = (await key(await workspace(1))).token
    const id = (await request("POST", "/v0/agents", stranger, { name: "audited" })).body!["agent"].agentId as string
    await waitForStatus(stranger, id, "running")
    await control((c) => c.editWorkspaceFile(id, "sub/marker.txt", new TextEncoder().encode("output-only-marker-7d1e")))
    assert.strictEqual((await exec({ command: "cat marker.txt; exit 4", cwd: "sub" }, stranger, id)).body!["stdout"], "output-only-marker-7d1e")
    assert.strictEqual((await exec({ command: "head -c 5000 /dev/zero" }, stranger, id)).body!["truncated"], true)
    assert.strictEqual((await exec({ command: "sleep 30" }, stranger, id)).body!["timedOut"], true)
    expectError(await exec({ command: "pwd", cwd: "../.." }, stranger, id), 400, "Invalid command")
    expectError(await exec({ command: "" }, stranger, id), 400, "Invalid command")

    const trail = await request("GET", `/v0/agents/${id}/events`, stranger)
    assert.strictEqual(trail.status, 200)
    const events = trail.body!["events"] as Array<{ type: string; at: string; actor: string; stream: string; data: Record<string, unknown> }>
    assert.strictEqual(events[0]!.type, "AgentCreated")
    const consoleEvents = events.filter((e) => e.stream === `console-${id}`)
    assert.deepStrictEqual(consoleEvents.map((e) => e.type), ["ConsoleCommandRan", "ConsoleCommandRan", "ConsoleCommandRan", "ConsoleCommandNotRun"])
    const [cat, head, sleep, outside] = consoleEvents.map((e) => e.data)
    assert.deepInclude(cat, { agentId: id, command: "cat marker.txt; exit 4", cwd: "sub", exitCode: 4, timedOut: false, truncated: false })
    assert.isNumber(cat!["durationMs"])
    assert.deepInclude(head, { command: "head -c 5000 /dev/zero", exitCode: 0, truncated: true, timedOut: false })
    assert.notProperty(head, "cwd")
    assert.deepInclude(sleep, { command: "sleep 30", exitCode: 137, timedOut: true })
    assert.deepInclude(outside, { command: "pwd", cwd: "../..", reason: "cwd-outside-workspace" })
    for (const e of consoleEvents) {
      assert.strictEqual(e.actor, "ada")
      assert.notProperty(e.data, "stdout")
      assert.notProperty(e.data, "stderr")
    }
    const text = JSON.stringify(trail.body)
    assert.notInclude(text, "output-only-marker-7d1e")
    assert.notInclude(text, "\\u0000")
    // One history in log order: the agent's own events and the console's interleaved by when they were recorded.
    assert.deepStrictEqual(events.map((e) => e.at), [...events.map((e) => e.at)].sort())
  })

  it("never records what a command printed, a secret included", async () => {
    const trail = JSON.stringify((await request("GET", `/v0/agents/${agentId}/events`, owner)).body)
    assert.include(trail, "printenv CONSOLE_TOKEN")
    assert.notInclude(trail, secretValue)
  })
})
