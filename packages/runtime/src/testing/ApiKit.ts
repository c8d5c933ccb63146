/**
 * The assertions and steps HTTP tests share, written once so that every test asks the same of the API: an error
 * reply is checked whole (status, JSON content type, and exactly the documented `{ error }` body), and a wait for an
 * agent is bounded and says where the agent got to when it gives up. `expectError` needs only a reply; the agent
 * steps are made over a test runtime's `request` client (`make(api.request)`), so a test with a second runtime
 * makes a second kit. `@cairn/runtime/testing`.
 */
import { assert } from "vitest"
import type { makeTestApi, Reply } from "./TestRuntime.ts"

/** The test runtime's client: a JSON request with an optional bearer token, its reply parsed. */
export type Request = ReturnType<typeof makeTestApi>["request"]

/**
 * A field an error body must have: its exact value, a pattern its text must match, or a function that asserts on it
 * (for a field whose value the test cannot know whole, such as a new agent).
 */
export type Expected =
  | string
  | RegExp
  | number
  | boolean
  | null
  | ReadonlyArray<unknown>
  | Readonly<Record<string, unknown>>
  | ((value: any) => void)

const expectField = (actual: unknown, expected: Expected, label: string) => {
  if (typeof expected === "function") expected(actual)
  else if (expected instanceof RegExp) {
    assert.isString(actual, label)
    assert.match(actual as string, expected, label)
  } else assert.deepStrictEqual(actual, expected, label)
}

/**
 * Asserts a refusal: the status, a JSON content type, and a body that is exactly `{ error }` (the message equal to
 * `error`, or matching it when a pattern) plus the `details` named, each equal, matching or passing its check, and
 * no other field.
 */
export const expectError = (response: Reply, status: number, error: string | RegExp, details: Readonly<Record<string, Expected>> = {}) => {
  const shown = JSON.stringify(response.body)
  assert.strictEqual(response.status, status, shown)
  assert.match(response.contentType ?? "(none)", /^application\/json\b/, `the content type of ${shown}`)
  assert.isObject(response.body, "an error has a JSON object for its body")
  assert.deepStrictEqual(Object.keys(response.body!).sort(), ["error", ...Object.keys(details)].sort(), `the fields of ${shown}`)
  expectField(response.body!["error"], error, shown)
  for (const [field, expected] of Object.entries(details)) expectField(response.body![field], expected, `${field} in ${shown}`)
}

/** How long a wait for an agent lasts before it fails (the simulated engine starts a gateway in 20 ms). */
export const defaultWaitMs = 10_000

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** The agent steps, over one test runtime's client. */
export const make = (request: Request) => {
  /**
   * Asks for the agent (`GET /v0/agents/{agentId}`) until `done` holds for its body, and answers that body. Each
   * answer must be 200; after `timeoutMs` it fails, showing the last body it got.
   */
  const waitForAgent = async (token: string, agentId: string, what: string, done: (body: Record<string, any>) => boolean, timeoutMs = defaultWaitMs) => {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const got = await request("GET", `/v0/agents/${agentId}`, token)
      assert.strictEqual(got.status, 200, `agent ${agentId} while waiting for ${what}: ${JSON.stringify(got.body)}`)
      if (done(got.body!)) return got.body!
      if (Date.now() > deadline) return assert.fail(`agent ${agentId}: ${what} never came in ${timeoutMs} ms; last: ${JSON.stringify(got.body)}`)
      await sleep(10)
    }
  }

  /** Waits (bounded, as `waitForAgent`) until the agent's status is `status`, and answers the agent's body then. */
  const waitForStatus = (token: string, agentId: string, status: string, timeoutMs = defaultWaitMs) =>
    waitForAgent(token, agentId, `status ${status}`, (body) => body["agent"]?.status === status, timeoutMs)

  /** `POST /v0/agents` with `{ name: "helper", ...body }`: the reply, whatever it is, for the test to check. */
  const createAgent = (token: string, body: Readonly<Record<string, unknown>> = {}) => request("POST", "/v0/agents", token, { name: "helper", ...body })

  /** Creates an agent (asserting 201) and waits until it runs; answers its id. */
  const newAgent = async (token: string, name = "helper", body: Readonly<Record<string, unknown>> = {}) => {
    const created = await createAgent(token, { ...body, name })
    assert.strictEqual(created.status, 201, JSON.stringify(created.body))
    const agentId = created.body!["agent"].agentId as string
    await waitForStatus(token, agentId, "running")
    return agentId
  }

  return { waitForAgent, waitForStatus, createAgent, newAgent }
}
