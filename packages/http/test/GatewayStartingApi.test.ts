/**
 * Routes that need an agent's gateway while it is on its way up (a restart under way): they wait for it, a bounded
 * time, and then answer 503 with `Retry-After`, never a 500. The simulated engine holds the start, so the gateway
 * is seen starting for sure.
 */
import { ApiKit, TestRuntime } from "@cairn/runtime/testing"
import { afterAll, assert, describe, it } from "@effect/vitest"

const { web, request, workspace, key, control, dispose } = TestRuntime.makeTestApi({ readyWait: "1 second" })
afterAll(dispose)
const { newAgent, waitForStatus } = ApiKit.make(request)

/** A raw GET, for the answer's headers. */
const get = (path: string, token: string) => web.handler(new Request(`http://cairn${path}`, { headers: { authorization: `Bearer ${token}` } }))

describe("a route that needs the gateway, while it starts", () => {
  it("waits for it and answers once it is up; past the wait, 503 with Retry-After", async () => {
    const token = (await key(await workspace(2))).token
    const agentId = await newAgent(token)

    await control((c) => c.holdStarts)
    const restart = request("POST", `/v0/agents/${agentId}/restart`, token)
    // The restart is under way (recorded: the agent shows starting) and its start held: the gateway is on its way up.
    await waitForStatus(token, agentId, "starting")
    const late = await get(`/v0/agents/${agentId}/devices`, token)
    assert.strictEqual(late.status, 503)
    assert.strictEqual(late.headers.get("retry-after"), "5")
    ApiKit.expectError(await TestRuntime.replyOf(late), 503, "Agent is starting, try again shortly")
    ApiKit.expectError(await request("GET", `/v0/agents/${agentId}/tasks`, token), 503, "Agent is starting, try again shortly")
    ApiKit.expectError(await request("GET", `/v0/agents/${agentId}/config`, token), 503, "Agent is starting, try again shortly")

    // A request that arrives while it starts, and the start goes through within its wait: it is answered as usual.
    const waiting = request("GET", `/v0/agents/${agentId}/devices`, token)
    await control((c) => c.releaseStarts)
    assert.deepStrictEqual((await waiting).body, { pending: [], paired: [] })
    assert.strictEqual((await restart).status, 200)
    assert.strictEqual((await request("GET", `/v0/agents/${agentId}/tasks`, token)).status, 200)
  })
})
