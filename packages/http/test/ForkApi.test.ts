/**
 * Forking an agent from a snapshot through the real routes (`POST /v0/agents {fromSnapshot}`), on the simulated
 * engine and the in-memory snapshot store: the new agent's workspace is the snapshot, it has the source's skills and
 * model, the source's secrets only when listed, its origin is in both agents' histories, a deleted agent's snapshot
 * forks within its grace period, and every refusal is the documented one.
 */
import { AgentEngine, type WorkspaceEntry } from "@cairn/agent-engine"
import { ContentStore } from "@cairn/content-store"
import { ApiKit, TestRuntime } from "@cairn/runtime/testing"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect } from "effect"

const { runtime, request, workspace, key, control, dispose } = TestRuntime.makeTestApi()
const { expectError } = ApiKit
const { waitForStatus, newAgent } = ApiKit.make(request)

const text = (value: string) => new TextEncoder().encode(value)
const write = (agentId: string, path: string, content: string) => control((c) => c.editWorkspaceFile(agentId, path, text(content)))
/** The workspace's files and their text, as the engine has them. */
const files = (agentId: string) =>
  runtime.runPromise(Effect.gen(function*() {
    const engine = yield* AgentEngine
    const entries = yield* engine.scanWorkspace(agentId, { exclude: () => false })
    const contents: Record<string, string> = {}
    for (const entry of entries.filter((e: WorkspaceEntry) => e.kind === "file")) {
      contents[entry.path] = new TextDecoder().decode(yield* engine.readWorkspaceFile(agentId, entry.path))
    }
    return contents
  }))
const events = async (token: string, agentId: string) =>
  (await request("GET", `/v0/agents/${agentId}/events`, token)).body!["events"] as Array<{ type: string; actor: string; data: Record<string, any> }>

let owner: string
let sourceId: string
let snapshotCid: string
let secretId: string

beforeAll(async () => {
  owner = (await key(await workspace(10))).token
  const folderCid = await runtime.runPromise(ContentStore.use((c) =>
    c.addDirectory([{ path: "SKILL.md", content: text("---\nname: notes\ndescription: Takes notes\n---\nWrite them down.\n") }], { network: "public" })
  ).pipe(Effect.map((added) => added.cid)))
  const skillCid = await request("POST", "/v0/skills", owner, { skillCid: folderCid })
  secretId = (await request("POST", "/v0/secrets", owner, { name: "OPENAI_API_KEY", value: "sk-fork-test" })).body!["secret"].id
  sourceId = (await request("POST", "/v0/agents", owner, { name: "Original", model: "openai/gpt-5", secretIds: [secretId] })).body!["agent"].agentId
  await waitForStatus(owner, sourceId, "running")
  assert.include([200, 201], skillCid.status, JSON.stringify(skillCid.body))
  const attached = await request("POST", `/v0/agents/${sourceId}/skills`, owner, { skillCids: [skillCid.body!["skill"].skillCid] })
  assert.strictEqual(attached.status, 200, JSON.stringify(attached.body))
  await write(sourceId, "MEMORY.md", "the source remembers\n")
  await write(sourceId, "notes/plan.txt", "step one\n")
  const synced = await request("POST", `/v0/agents/${sourceId}/snapshots/sync`, owner)
  assert.strictEqual(synced.status, 200, JSON.stringify(synced.body))
  snapshotCid = synced.body!["snapshotCid"]
  // The source goes on after the snapshot: the fork gets the snapshot, not the workspace as it is now.
  await write(sourceId, "MEMORY.md", "changed after the snapshot\n")
}, 120_000)

afterAll(dispose)

describe("a fork from a snapshot", () => {
  it("is a new agent whose workspace is the snapshot, with the source's skills and model, and its origin recorded on both", async () => {
    const created = await request("POST", "/v0/agents", owner, { fromSnapshot: snapshotCid, name: "Fork" })
    assert.strictEqual(created.status, 201, JSON.stringify(created.body))
    const forkId = created.body!["agent"].agentId as string
    assert.notStrictEqual(forkId, sourceId)
    assert.include(created.body!["agent"], { name: "Fork", model: "openai/gpt-5" })
    await waitForStatus(owner, forkId, "running")
    const workspace = await files(forkId)
    assert.strictEqual(workspace["MEMORY.md"], "the source remembers\n")
    assert.strictEqual(workspace["notes/plan.txt"], "step one\n")
    const detail = (await request("GET", `/v0/agents/${forkId}`, owner)).body!
    assert.deepStrictEqual(detail["skills"].map((s: { name: string }) => s.name), ["notes"])
    // Secrets only when the caller lists them.
    assert.deepStrictEqual(detail["secrets"], [])
    const createdEvent = (await events(owner, forkId)).find((e) => e.type === "AgentCreated")!
    assert.deepStrictEqual(createdEvent.data["fromSnapshot"], { agentId: sourceId, snapshotCid })
    const forkedEvent = (await events(owner, sourceId)).find((e) => e.type === "SnapshotForked")!
    assert.deepInclude(forkedEvent.data, { agentId: sourceId, snapshotCid, forkAgentId: forkId })
    assert.strictEqual(forkedEvent.actor, "ada")
  })

  it("takes the source's secrets when listed, and a default name from the source", async () => {
    const created = await request("POST", "/v0/agents", owner, { fromSnapshot: snapshotCid, secretIds: [secretId] })
    assert.strictEqual(created.status, 201, JSON.stringify(created.body))
    assert.strictEqual(created.body!["agent"].name, "Original")
    const detail = (await request("GET", `/v0/agents/${created.body!["agent"].agentId}`, owner)).body!
    assert.deepStrictEqual(detail["secrets"].map((s: { name: string }) => s.name), ["OPENAI_API_KEY"])
  })

  it("works from a deleted agent's snapshot within its grace period", async () => {
    const doomed = await newAgent(owner, "doomed")
    await write(doomed, "LAST.md", "last words\n")
    const cid = (await request("POST", `/v0/agents/${doomed}/snapshots/sync`, owner)).body!["snapshotCid"] as string
    assert.strictEqual((await request("DELETE", `/v0/agents/${doomed}`, owner)).status, 200)
    const created = await request("POST", "/v0/agents", owner, { fromSnapshot: cid, name: "Revived" })
    assert.strictEqual(created.status, 201, JSON.stringify(created.body))
    const revived = created.body!["agent"].agentId as string
    await waitForStatus(owner, revived, "running")
    assert.strictEqual((await files(revived))["LAST.md"], "last words\n")
  })

  it("refuses a CID that is no snapshot of the workspace's, a malformed one, and a template too", async () => {
    expectError(await request("POST", "/v0/agents", owner, { fromSnapshot: "bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku" }), 404, "Snapshot not found")
    expectError(await request("POST", "/v0/agents", owner, { fromSnapshot: "not-a-cid" }), 400, "Validation failed: fromSnapshot must be a snapshot's CID")
    expectError(await request("POST", "/v0/agents", owner, { fromSnapshot: 42 }), 400, "Validation failed: fromSnapshot must be a snapshot's CID")
    expectError(await request("POST", "/v0/agents", owner, { fromSnapshot: snapshotCid, templateId: "t" }), 400,
      "Validation failed: give templateId or fromSnapshot, not both")
    const stranger = (await key(await workspace(10), ["org:agents"], "eve")).token
    expectError(await request("POST", "/v0/agents", stranger, { fromSnapshot: snapshotCid }), 404, "Snapshot not found")
  })
})
