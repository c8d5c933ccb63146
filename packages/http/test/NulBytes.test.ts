/**
 * A NUL character anywhere a client controls (a path segment, a query value, a JSON string or key) is bad input:
 * 400 `Validation failed: …`, never a 500, and never a 503 that would tell load balancers and alerting that the
 * service is down. Postgres cannot store NUL in text, so this must be caught before the database, on every route.
 * Runs on PGlite, and on Postgres when DATABASE_URL is set.
 */
import { ApiKit, TestRuntime } from "@cairn/runtime/testing"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"

const api = TestRuntime.makeTestApi()
const { request, workspace, key } = api
afterAll(api.dispose)

const expectValidationFailed = (response: TestRuntime.Reply, what: string) => {
  assert.strictEqual(response.status, 400, `${what}: ${JSON.stringify(response.body)}`)
  assert.match(response.body?.["error"], /^Validation failed: /, what)
  ApiKit.expectError(response, 400, /^Validation failed: /)
}

let token: string
let agentId: string

beforeAll(async () => {
  const workspaceId = await workspace(10)
  token = (await key(workspaceId, ["org:agents", "org:files:read", "org:files:write"])).token
  agentId = (await request("POST", "/v0/agents", token, { name: "nul-probe" })).body!["agent"].agentId
}, 120_000)

describe("a NUL character", () => {
  it("in a path segment or a query value, percent-encoded or raw, on /v0, /v3 and /admin: 400", async () => {
    const probes: ReadonlyArray<readonly [string, string, string | undefined]> = [
      ["GET", "/v0/agents/%00", token],
      ["GET", `/v0/agents/${agentId}%00`, token],
      ["GET", `/v0/agents/${agentId}/snapshots?pageToken=%00`, token],
      ["GET", `/v0/agents/${agentId}/tasks?includeDisabled=%00`, token],
      ["DELETE", "/v0/secrets/a%00b", token],
      ["GET", "/v3/files/public/%00", token],
      ["GET", "/v3/files/public?name=%00&cid=%00", token],
      ["GET", "/v3/files/private?keyvalues[a]=%00", token],
      ["GET", "/v3/cids/%00/signature", token],
      ["GET", "/ipfs/%00", undefined],
      ["GET", "/admin/workspaces/%00", TestRuntime.adminToken],
      ["GET", "/v0/agents/%2500%00", token]
    ]
    for (const [method, path, bearer] of probes) expectValidationFailed(await request(method, path, bearer), `${method} ${path}`)
  })

  it("in a JSON string value or key: 400, and nothing is recorded", async () => {
    expectValidationFailed(await request("POST", "/v0/secrets", token, { name: "A_KEY", value: "sk-\u0000" }), "secret value")
    expectValidationFailed(await request("POST", "/v0/agents", token, { name: "a\u0000b" }), "agent name")
    const command = await request("POST", `/v0/agents/${agentId}/console/exec`, token, { command: "echo \u0000" })
    assert.deepStrictEqual([command.status, command.body], [400, { error: "Invalid command" }])
    // Routes whose body the domain parses itself answer their own documented 400.
    const config = await request("PUT", `/v0/agents/${agentId}/config`, token, { config: { "k\u0000": 1 } })
    assert.strictEqual(config.status, 400, JSON.stringify(config.body))
    const task = await request("POST", `/v0/agents/${agentId}/tasks`, token, {
      name: "n\u0000", schedule: { kind: "every", everyMs: 60_000 }, payload: { kind: "systemEvent", message: "m" }
    })
    assert.strictEqual(task.status, 400, JSON.stringify(task.body))
    expectValidationFailed(await request("POST", "/admin/workspaces", TestRuntime.adminToken, { name: "W\u0000", plan: "pro" }), "workspace name")
    const agents = await request("GET", "/v0/agents", token)
    assert.strictEqual(agents.status, 200)
    assert.notInclude(JSON.stringify(agents.body), "a\\u0000b")
  })

  it("in an upload's multipart fields (its name, its key-values): 400, not a database failure", async () => {
    const upload = async (fields: Record<string, string>) => {
      const form = new FormData()
      form.append("file", new Blob(["hello"]), "hello.txt")
      form.append("network", "public")
      for (const [name, value] of Object.entries(fields)) form.append(name, value)
      const response = await api.web.handler(new Request("http://cairn/v3/files", {
        method: "POST", headers: { authorization: `Bearer ${token}` }, body: form
      }))
      return TestRuntime.replyOf(response)
    }
    expectValidationFailed(await upload({ name: "a\u0000b" }), "upload name")
    expectValidationFailed(await upload({ keyvalues: JSON.stringify({ k: "v\u0000" }) }), "upload keyvalues")
    assert.strictEqual((await upload({ name: "fine" })).status, 200)
  })

  it("leaves the service healthy", async () => {
    assert.strictEqual((await request("GET", "/readyz")).status, 200)
    assert.strictEqual((await request("GET", "/v0/agents", token)).status, 200)
  })
})
