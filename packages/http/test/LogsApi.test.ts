/**
 * An agent gateway's log through the real routes, on the simulated engine: the recent lines (Pinata's `{logs}` with
 * the entries beside it), the server-sent event stream of new ones, resuming with `Last-Event-ID`, bad input, and no
 * secret value in either, whatever the gateway (or the agent, whose home holds the log) wrote.
 */
import { ApiKit, TestRuntime } from "@cairn/runtime/testing"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"

const { web, request, workspace, key, control, dispose } = TestRuntime.makeTestApi()
const { expectError } = ApiKit
const kit = ApiKit.make(request)

let owner: string
let agentId: string
const secretValue = "sk-ant-log-leak-0123456789"

/** A line as OpenClaw's file logger writes it. */
const openClawLine = (message: string, level = "INFO") =>
  JSON.stringify({ 0: JSON.stringify({ subsystem: "agent" }), 1: message, _meta: { logLevelName: level, date: "2026-11-28T07:00:00.000Z" }, time: "2026-11-28T07:00:00.000Z" })

beforeAll(async () => {
  owner = (await key(await workspace(5))).token
  const created = await kit.createAgent(owner, { name: "talkative" })
  agentId = created.body!["agent"].agentId
  await kit.waitForStatus(owner, agentId, "running")
  const secret = await request("POST", "/v0/secrets", owner, { name: "ANTHROPIC_API_KEY", value: secretValue })
  assert.strictEqual(secret.status, 201, JSON.stringify(secret.body))
  const attached = await request("POST", `/v0/agents/${agentId}/secrets`, owner, { secretIds: [secret.body!["secret"].id] })
  assert.strictEqual(attached.status, 200, JSON.stringify(attached.body))
  // Secrets reach a gateway when it starts.
  assert.strictEqual((await request("POST", `/v0/agents/${agentId}/restart`, owner, {})).status, 200)
  await kit.waitForStatus(owner, agentId, "running")
  assert.strictEqual((await control((c) => c.environmentOf(agentId)))?.["ANTHROPIC_API_KEY"], secretValue)
}, 60_000)

afterAll(dispose)

/** Reads a server-sent event stream until `enough` says so (or 10 s pass), then closes it. */
const readEvents = async (response: Response, enough: (text: string) => boolean) => {
  const reader = response.body!.getReader()
  const decoder = new TextDecoder()
  let text = ""
  const deadline = Date.now() + 10_000
  // One read outstanding at a time: a read the timer beat still gets the next chunk.
  let pending = reader.read()
  while (!enough(text) && Date.now() < deadline) {
    const result = await Promise.race([pending, new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 500))])
    if (result === undefined) continue
    if (result.done) break
    text += decoder.decode(result.value, { stream: true })
    pending = reader.read()
  }
  await reader.cancel()
  return text
}

const dataOf = (text: string) =>
  text.split("\n\n").filter((event) => event.includes("event: log")).map((event) =>
    JSON.parse(event.split("\n").find((line) => line.startsWith("data: "))!.slice("data: ".length)) as { message: string; level: string | null; source: string | null }
  )

describe("an agent's logs", () => {
  it("are its gateway's recent lines, as text and as entries, with every secret value replaced", async () => {
    await control((c) => c.writeGatewayLog(agentId, openClawLine(`calling the model with key ${secretValue}`, "WARN")))
    await control((c) => c.writeGatewayLog(agentId, `a plain line that names ${secretValue} too`))
    const read = await request("GET", `/v0/agents/${agentId}/logs`, owner)
    assert.strictEqual(read.status, 200, JSON.stringify(read.body))
    const body = read.body as { logs: string; entries: Array<{ timestamp: string | null; level: string | null; source: string | null; message: string }>; cursor: number }
    // The gateway's own start is there, as the engine logged it.
    assert.match(body.logs, /listening on ws:\/\/127\.0\.0\.1:\d+/)
    assert.deepInclude(body.entries, { timestamp: "2026-11-28T07:00:00.000Z", level: "warn", source: "agent", message: "calling the model with key [redacted]" })
    assert.deepInclude(body.entries, { timestamp: null, level: null, source: null, message: "a plain line that names [redacted] too" })
    assert.include(body.logs, "2026-11-28T07:00:00.000Z WARN [agent] calling the model with key [redacted]")
    assert.notInclude(JSON.stringify(read.body), secretValue)
    assert.isAbove(body.cursor, 0)

    const last = await request("GET", `/v0/agents/${agentId}/logs?lines=1`, owner)
    assert.deepStrictEqual((last.body as typeof body).entries.map((entry) => entry.message), ["a plain line that names [redacted] too"])
  })

  it("refuse a bad line count, another workspace and an unknown agent", async () => {
    for (const lines of ["0", "1001", "ten", "1.5", "-3"]) {
      expectError(await request("GET", `/v0/agents/${agentId}/logs?lines=${lines}`, owner), 400, "Validation failed: lines must be a whole number from 1 to 1000")
    }
    const stranger = (await key(await workspace(1))).token
    expectError(await request("GET", `/v0/agents/${agentId}/logs`, stranger), 404, "Agent not found")
    expectError(await request("GET", "/v0/agents/no-such-agent/logs", owner), 404, "Agent not found")
    expectError(await request("GET", `/v0/agents/${agentId}/logs`, undefined), 401, "Unauthorized", { reason: "missing-credentials" })
  })

  it("stream as server-sent events: the last lines, then each new one, redacted; Last-Event-ID resumes after it", async () => {
    const open = (headers: Record<string, string> = {}, query = "?lines=2") =>
      web.handler(new Request(`http://cairn/v0/agents/${agentId}/logs/stream${query}`, { headers: { authorization: `Bearer ${owner}`, ...headers } }))
    const response = await open()
    assert.strictEqual(response.status, 200)
    assert.match(response.headers.get("content-type") ?? "", /^text\/event-stream/)
    // A line written while the stream is open arrives on it.
    setTimeout(() => void control((c) => c.writeGatewayLog(agentId, openClawLine(`new work with ${secretValue}`))), 300)
    const text = await readEvents(response, (seen) => seen.includes("new work"))
    const messages = dataOf(text).map((entry) => entry.message)
    assert.strictEqual(messages.length, 3, text)
    assert.strictEqual(messages.at(-1), "new work with [redacted]")
    assert.notInclude(text, secretValue)
    const ids = [...text.matchAll(/^id: (\d+)$/gm)].map((match) => Number(match[1]))
    assert.isAtLeast(ids.length, 2, text)

    // Reconnecting after the first chunk (the two earlier lines) gets the new line again, and nothing before it.
    const resumed = await readEvents(await open({ "last-event-id": String(ids[0]) }), (seen) => seen.includes("new work"))
    assert.deepStrictEqual(dataOf(resumed).map((entry) => entry.message), ["new work with [redacted]"])

    // lines=0: only what comes next (nothing, in the second it is read).
    const quietUntil = Date.now() + 1_000
    const quiet = await readEvents(await open({}, "?lines=0"), (seen) => seen.length > 0 && Date.now() > quietUntil)
    assert.deepStrictEqual(dataOf(quiet), [])
    const refused = await open({}, "?lines=5000")
    assert.strictEqual(refused.status, 400)
  }, 30_000)

  it("keep the gateway's stop and crash after it is stopped", async () => {
    await control((c) => c.crash(agentId))
    const read = await request("GET", `/v0/agents/${agentId}/logs?lines=5`, owner)
    assert.include((read.body as { logs: string }).logs, "ERROR [gateway] exited unexpectedly")
  })
})
