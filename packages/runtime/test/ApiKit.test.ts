/**
 * The HTTP test kit itself: what `expectError` refuses (a wrong status, a body that is not JSON, a field more or
 * less than named, a message that differs) and how the agent waits end (the body once done, a non-200 at once, the
 * last state when the time is up). Over replies made by hand, without a runtime.
 */
import { assert, describe, it } from "@effect/vitest"
import { ApiKit, type TestRuntime } from "../src/testing/index.ts"

const json = "application/json"
const reply = (status: number, body: Record<string, any> | undefined, contentType: string | undefined = json): TestRuntime.Reply => ({ status, body, contentType })
const refuses = (f: () => void, message: RegExp) => assert.throws(f, message)
const rejects = async (promise: Promise<unknown>, message: RegExp) => {
  const outcome = await promise.then(() => undefined, (error: unknown) => String(error))
  assert.isDefined(outcome, "it should have failed")
  assert.match(outcome!, message)
}

describe("expectError", () => {
  it("passes a reply that is exactly the status, a JSON content type and { error }, plus the details named", () => {
    ApiKit.expectError(reply(404, { error: "Agent not found" }), 404, "Agent not found")
    ApiKit.expectError(reply(400, { error: "Validation failed: name is required" }, "application/json; charset=utf-8"), 400, /^Validation failed: /)
    ApiKit.expectError(reply(401, { error: "Unauthorized", reason: "expired" }), 401, "Unauthorized", { reason: "expired" })
    ApiKit.expectError(reply(409, { error: "Conflict", list: [1, 2] }), 409, "Conflict", { list: [1, 2] })
    ApiKit.expectError(reply(500, { error: "Failed", agent: { name: "a" } }), 500, "Failed", { agent: (agent) => assert.strictEqual(agent.name, "a") })
  })

  it("refuses another status, another message, or a message the pattern does not match", () => {
    refuses(() => ApiKit.expectError(reply(400, { error: "Nope" }), 404, "Nope"), /expected 400 to equal 404/)
    refuses(() => ApiKit.expectError(reply(404, { error: "Nope" }), 404, "Agent not found"), /Nope/)
    refuses(() => ApiKit.expectError(reply(404, { error: "Nope" }), 404, /^Agent/), /Nope/)
  })

  it("refuses a field the test did not name, a named field missing or different, and a body that is no JSON object", () => {
    refuses(() => ApiKit.expectError(reply(401, { error: "Unauthorized", reason: "expired" }), 401, "Unauthorized"), /the fields of/)
    refuses(() => ApiKit.expectError(reply(401, { error: "Unauthorized" }), 401, "Unauthorized", { reason: "expired" }), /the fields of/)
    refuses(() => ApiKit.expectError(reply(401, { error: "Unauthorized", reason: "revoked" }), 401, "Unauthorized", { reason: "expired" }), /reason in/)
    refuses(() => ApiKit.expectError(reply(500, undefined), 500, "Internal error"), /JSON object/)
  })

  it("refuses an error that is not sent as JSON", () => {
    refuses(() => ApiKit.expectError(reply(404, { error: "Agent not found" }, "text/plain"), 404, "Agent not found"), /content type/)
    const untyped: TestRuntime.Reply = { status: 404, body: { error: "Agent not found" }, contentType: undefined }
    refuses(() => ApiKit.expectError(untyped, 404, "Agent not found"), /content type/)
  })
})

describe("the agent steps", () => {
  /** A client whose `GET /v0/agents/{id}` answers the given replies in turn (the last one again once they run out). */
  const scripted = (replies: ReadonlyArray<TestRuntime.Reply>) => {
    const calls: Array<[string, string, unknown]> = []
    let next = 0
    const request: ApiKit.Request = async (method, path, _token, body) => {
      calls.push([method, path, body])
      if (method === "POST") return reply(201, { agent: { agentId: "a1", status: "starting" } })
      return replies[Math.min(next++, replies.length - 1)]!
    }
    return { request, calls }
  }
  const agent = (status: string) => reply(200, { agent: { agentId: "a1", status } })

  it("waitForStatus answers the agent's body once it has the status", async () => {
    const { request } = scripted([agent("starting"), agent("starting"), agent("running")])
    assert.deepStrictEqual(await ApiKit.make(request).waitForStatus("t", "a1", "running"), { agent: { agentId: "a1", status: "running" } })
  })

  it("waitForStatus fails at once on an answer other than 200, and after its time with the last state", async () => {
    const missing = scripted([reply(404, { error: "Agent not found" })])
    await rejects(ApiKit.make(missing.request).waitForStatus("t", "a1", "running"), /Agent not found/)
    const stuck = scripted([agent("starting")])
    await rejects(ApiKit.make(stuck.request).waitForStatus("t", "a1", "running", 50), /status running never came in 50 ms; last: .*"starting"/)
  })

  it("newAgent creates the agent with its name, waits until it runs and answers its id", async () => {
    const { request, calls } = scripted([agent("running")])
    assert.strictEqual(await ApiKit.make(request).newAgent("t", "scout", { secretIds: ["s"] }), "a1")
    assert.deepStrictEqual(calls[0], ["POST", "/v0/agents", { name: "scout", secretIds: ["s"] }])
  })
})
