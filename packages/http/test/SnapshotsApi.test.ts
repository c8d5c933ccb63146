/**
 * Workspace snapshots through the real routes on the simulated engine and the in-memory snapshot store: sync (new,
 * unchanged, change summaries), status, the paginated list, reset (exact tree, pre-reset snapshot, undo), retention
 * and garbage collection, every documented refusal, and the audit trail.
 */
import { AgentEngine, type WorkspaceEntry } from "@cairn/agent-engine"
import { CommandHandler, ReadModels, Snapshots } from "@cairn/application"
import { Snapshot } from "@cairn/domain"
import { ContentStoreUnavailable, SnapshotStore } from "@cairn/content-store"
import { HeliaSnapshotStore } from "@cairn/content-store-helia"
import { ApiKit, TestRuntime } from "@cairn/runtime/testing"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect, Layer, Stream } from "effect"
import { SqlClient } from "effect/sql"

const { runtime, request, workspace, key, control, dispose } = TestRuntime.makeTestApi({ snapshots: { keep: 3 } })

const { expectError } = ApiKit
const { waitForStatus, newAgent } = ApiKit.make(request)

const text = (value: string) => new TextEncoder().encode(value)
const write = (agentId: string, path: string, content: string | undefined) =>
  control((c) => c.editWorkspaceFile(agentId, path, content === undefined ? undefined : text(content)))
/** The workspace as the engine has it: paths, kinds, modes and each file's text. */
const tree = (agentId: string) =>
  runtime.runPromise(Effect.gen(function*() {
    const engine = yield* AgentEngine
    const entries = yield* engine.scanWorkspace(agentId, { exclude: () => false })
    const contents: Array<[string, string]> = []
    for (const entry of entries.filter((e: WorkspaceEntry) => e.kind === "file")) {
      const bytes = yield* engine.readWorkspaceFile(agentId, entry.path)
      contents.push([entry.path, new TextDecoder().decode(bytes)])
    }
    return { entries: entries.map(({ path, kind, mode, target }) => ({ path, kind, mode, target })), contents }
  }))

let owner: string
let agentId: string
const sync = (token = owner, id = agentId) => request("POST", `/v0/agents/${id}/snapshots/sync`, token)
const reset = (body: unknown, token = owner, id = agentId) => request("POST", `/v0/agents/${id}/snapshots/reset`, token, body)
const list = (query = "", token = owner, id = agentId) => request("GET", `/v0/agents/${id}/snapshots${query}`, token)

beforeAll(async () => {
  owner = (await key(await workspace(10))).token
  agentId = await newAgent(owner, "snapshots")
}, 120_000)

afterAll(dispose)

describe("the agent's snapshot fields", () => {
  it("are null before any snapshot, then the latest snapshot's time and CID, in the agent and the list alike", async () => {
    const fresh = await newAgent(owner, "fields")
    const shown = async () => {
      const detail = (await request("GET", `/v0/agents/${fresh}`, owner)).body!["agent"]
      const listed = ((await request("GET", "/v0/agents", owner)).body!["agents"] as Array<Record<string, unknown>>).find((a) => a["agentId"] === fresh)!
      assert.deepStrictEqual([listed["lastSync"], listed["snapshotCid"]], [detail["lastSync"], detail["snapshotCid"]])
      return { lastSync: detail["lastSync"], snapshotCid: detail["snapshotCid"] }
    }
    assert.deepStrictEqual(await shown(), { lastSync: null, snapshotCid: null })
    await write(fresh, "a.txt", "one")
    const first = (await sync(owner, fresh)).body!
    assert.deepStrictEqual(await shown(), { lastSync: first["lastSync"], snapshotCid: first["snapshotCid"] })
    await write(fresh, "a.txt", "two")
    const second = (await sync(owner, fresh)).body!
    assert.notStrictEqual(second["snapshotCid"], first["snapshotCid"])
    assert.deepStrictEqual(await shown(), { lastSync: second["lastSync"], snapshotCid: second["snapshotCid"] })
    // What a restart and a PATCH answer shows them too.
    const restarted = (await request("POST", `/v0/agents/${fresh}/restart`, owner)).body!["agent"]
    assert.deepStrictEqual([restarted["lastSync"], restarted["snapshotCid"]], [second["lastSync"], second["snapshotCid"]])
    const patched = (await request("PATCH", `/v0/agents/${fresh}`, owner, { vibe: "calm" })).body!["agent"]
    assert.deepStrictEqual([patched["lastSync"], patched["snapshotCid"]], [second["lastSync"], second["snapshotCid"]])
  })
})

describe("sync", () => {
  it("stores the workspace as a snapshot with a change summary; an unchanged workspace gives the same CID and no new entry", async () => {
    await write(agentId, "MEMORY.md", "remember this\n")
    await write(agentId, "notes/a.txt", "aaaa")
    const first = await sync()
    assert.strictEqual(first.status, 200, JSON.stringify(first.body))
    assert.strictEqual(first.body!["success"], true)
    assert.match(first.body!["snapshotCid"], /^bafy/)
    assert.isString(first.body!["lastSync"])
    assert.isAtLeast(first.body!["changeSummary"].added, 2)

    const again = await sync()
    assert.strictEqual(again.body!["snapshotCid"], first.body!["snapshotCid"])
    assert.deepStrictEqual(again.body!["changeSummary"], { added: 0, modified: 0, deleted: 0, bytesAdded: 0 })
    const listed = await list()
    assert.strictEqual(listed.body!["snapshots"].length, 1)

    await write(agentId, "notes/a.txt", "bbbbbb")
    await write(agentId, "notes/b.txt", "new")
    await write(agentId, "MEMORY.md", undefined)
    const changed = await sync()
    assert.notStrictEqual(changed.body!["snapshotCid"], first.body!["snapshotCid"])
    assert.deepStrictEqual(changed.body!["changeSummary"], { added: 1, modified: 1, deleted: 1, bytesAdded: 9 })

    const status = await request("GET", `/v0/agents/${agentId}/snapshots/sync`, owner)
    assert.strictEqual(status.status, 200)
    assert.strictEqual(status.body!["configured"], true)
    assert.strictEqual(status.body!["lastSync"], changed.body!["lastSync"])
    assert.isString(status.body!["message"])
  })

  it("refuses an agent the caller cannot see, and answers 404 for an unknown one", async () => {
    const stranger = (await key(await workspace(1))).token
    expectError(await sync(stranger), 404, "Agent not found")
    expectError(await list("", stranger), 404, "Agent not found")
    expectError(await reset({ snapshotCid: "bafkqaaa" }, stranger), 404, "Agent not found")
  })
})

describe("the list", () => {
  it("is newest first with trigger and change summary, paginated with limit and pageToken; bad paging is a validation failure", async () => {
    const id = await newAgent(owner, "paging")
    for (const n of [1, 2, 3]) {
      await write(id, "counter.txt", String(n))
      assert.strictEqual((await sync(owner, id)).status, 200)
    }
    const all = await list("", owner, id)
    assert.deepStrictEqual(all.body!["agentId"], id)
    const snapshots = all.body!["snapshots"] as Array<Record<string, any>>
    assert.strictEqual(snapshots.length, 3)
    assert.isTrue(snapshots.every((s) => s["trigger"] === "manual"))
    assert.isTrue(snapshots[0]!["createdAt"] >= snapshots[1]!["createdAt"])
    const page1 = await list("?limit=2", owner, id)
    assert.strictEqual(page1.body!["snapshots"].length, 2)
    const page2 = await list(`?limit=2&pageToken=${page1.body!["nextPageToken"]}`, owner, id)
    assert.deepStrictEqual(page2.body!["snapshots"], [snapshots[2]])
    assert.isUndefined(page2.body!["nextPageToken"])
    assert.match((await list("?limit=0", owner, id)).body!["error"], /^Validation failed: /)
    assert.match((await list("?pageToken=abc", owner, id)).body!["error"], /^Validation failed: /)
  })
})

describe("reset", () => {
  it("refuses a missing or malformed CID (400) and a CID not in this agent's history (404), touching nothing", async () => {
    for (const body of [{}, { snapshotCid: "" }, { snapshotCid: "not-a-cid" }, { snapshotCid: 7 }]) {
      expectError(await reset(body), 400, "Invalid snapshot CID")
    }
    expectError(await reset({ snapshotCid: "bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku" }), 404, "Snapshot not found")
    // Another agent's snapshot is not this agent's.
    const other = await newAgent(owner, "other")
    await write(other, "x.txt", "x")
    const theirs = (await sync(owner, other)).body!["snapshotCid"]
    expectError(await reset({ snapshotCid: theirs }), 404, "Snapshot not found")
  })

  it("restores the tree exactly, takes a pre-reset snapshot first, and resetting to that undoes it", async () => {
    const id = await newAgent(owner, "undo")
    await write(id, "keep.txt", "kept")
    await write(id, "old.txt", "old")
    await write(id, "dir/inner.txt", "inner v1")
    const target = (await sync(owner, id)).body!["snapshotCid"] as string
    const atTarget = await tree(id)

    await write(id, "old.txt", undefined)
    await write(id, "dir/inner.txt", "inner v2")
    await write(id, "added/new.txt", "new")
    const before = await tree(id)

    const done = await reset({ snapshotCid: target }, owner, id)
    assert.strictEqual(done.status, 200, JSON.stringify(done.body))
    assert.strictEqual(done.body!["success"], true)
    assert.strictEqual(done.body!["snapshotCid"], target)
    assert.isString(done.body!["message"])
    assert.deepStrictEqual(await tree(id), atTarget)
    await waitForStatus(owner, id, "running")

    const snapshots = (await list("", owner, id)).body!["snapshots"] as Array<Record<string, any>>
    const preReset = snapshots.find((s) => s["trigger"] === "pre-reset")!
    assert.strictEqual(preReset["snapshotCid"], done.body!["preResetCid"])
    assert.strictEqual((await reset({ snapshotCid: preReset["snapshotCid"] }, owner, id)).status, 200)
    assert.deepStrictEqual(await tree(id), before)

    const events = (await request("GET", `/v0/agents/${id}/events`, owner)).body!["events"] as Array<Record<string, any>>
    const types = events.map((e) => e["type"])
    assert.includeMembers(types, ["SnapshotTaken", "WorkspaceReset"])

    // Commands decide on the read model's history: it is the stream's fold, at the stream's version.
    const [fromTable, fromStream] = await runtime.runPromise(Effect.all([
      SqlClient.SqlClient.use((sql) => ReadModels.SnapshotsTable.queries(sql).history(id)),
      CommandHandler.use((commands) => commands.load(Snapshot.decider, Snapshot.stream(id)))
    ]))
    assert.deepStrictEqual(fromTable, fromStream)
  })

  it("keeps the newest N plus every pre-reset snapshot; garbage collection keeps what kept snapshots use", async () => {
    const id = await newAgent(owner, "retention")
    await write(id, "shared.txt", "in every snapshot")
    const cids: Array<string> = []
    for (const n of [1, 2, 3, 4, 5]) {
      await write(id, "n.txt", `version ${n}`)
      cids.push((await sync(owner, id)).body!["snapshotCid"])
    }
    const kept = ((await list("", owner, id)).body!["snapshots"] as Array<Record<string, any>>).map((s) => s["snapshotCid"])
    assert.deepStrictEqual(kept, [cids[4], cids[3], cids[2]])
    expectError(await reset({ snapshotCid: cids[0] }, owner, id), 404, "Snapshot not found")

    await runtime.runPromise(Snapshots.use((s) => s.collectGarbage))
    const present = await runtime.runPromise(SnapshotStore.use((store) => Effect.forEach(cids, (cid) => store.has(cid))))
    assert.deepStrictEqual(present, [false, false, true, true, true])
    // The kept ones are whole: a reset to the oldest kept one works.
    assert.strictEqual((await reset({ snapshotCid: cids[2] }, owner, id)).status, 200)
  })
})

describe("when snapshots are off", () => {
  it("every snapshot endpoint answers Storage not configured; the status says so", async () => {
    const off = TestRuntime.makeTestApi({ snapshots: { enabled: false } })
    try {
      const token = (await off.key(await off.workspace(2))).token
      const created = await off.request("POST", "/v0/agents", token, { name: "off" })
      const id = created.body!["agent"].agentId
      const expectOff = (response: TestRuntime.Reply) => expectError(response, 400, "Storage not configured")
      expectOff(await off.request("POST", `/v0/agents/${id}/snapshots/sync`, token))
      expectOff(await off.request("GET", `/v0/agents/${id}/snapshots`, token))
      expectOff(await off.request("POST", `/v0/agents/${id}/snapshots/reset`, token, { snapshotCid: "bafkqaaa" }))
      const status = await off.request("GET", `/v0/agents/${id}/snapshots/sync`, token)
      assert.strictEqual(status.status, 200)
      assert.strictEqual(status.body!["configured"], false)
    } finally {
      await off.dispose()
    }
  })
})

describe("failures", () => {
  // The in-memory store, with switches: imports refused as by a store out of reach, or file reads failing mid-restore.
  const faults = { importDown: false, catFails: false }
  const faulty = Layer.effect(SnapshotStore, Effect.map(SnapshotStore, (store) => SnapshotStore.of({
    ...store,
    importTree: (entries) =>
      faults.importDown ? Effect.fail(new ContentStoreUnavailable({ operation: "importTree", cause: new Error("connection refused") })) : store.importTree(entries),
    cat: (cid) => faults.catFails ? Stream.fail(new ContentStoreUnavailable({ operation: "cat", cause: new Error("disk gone") })) : store.cat(cid)
  }))).pipe(Layer.provide(HeliaSnapshotStore.layerMemory))
  const api = TestRuntime.makeTestApi({ snapshotStore: faulty })
  let token: string
  let id: string
  beforeAll(async () => {
    token = (await api.key(await api.workspace(2))).token
    id = await ApiKit.make(api.request).newAgent(token, "faults")
  }, 120_000)
  afterAll(api.dispose)
  const syncIt = () => api.request("POST", `/v0/agents/${id}/snapshots/sync`, token)
  const listIt = async () => (await api.request("GET", `/v0/agents/${id}/snapshots`, token)).body!["snapshots"] as Array<Record<string, any>>

  it("a workspace the engine cannot read is 500 Sync failed; a store out of reach is 503; neither lists anything", async () => {
    await api.control((c) => c.editWorkspaceFile(id, "a.txt", text("a")))
    await api.control((c) => c.failEngine(new Error("engine down")))
    expectError(await syncIt(), 500, "Sync failed")
    await api.control((c) => c.restoreEngine)
    faults.importDown = true
    expectError(await syncIt(), 503, "Snapshot storage unavailable")
    faults.importDown = false
    assert.deepStrictEqual(await listIt(), [])
    assert.strictEqual((await syncIt()).status, 200)
  })

  it("a restore that fails part way answers Reset failed with the pre-reset CID, which restores the workspace", async () => {
    await api.control((c) => c.editWorkspaceFile(id, "a.txt", text("first")))
    const first = (await syncIt()).body!["snapshotCid"] as string
    await api.control((c) => c.editWorkspaceFile(id, "a.txt", text("second")))
    await api.control((c) => c.editWorkspaceFile(id, "b.txt", text("only in second")))
    faults.catFails = true
    const failed = await api.request("POST", `/v0/agents/${id}/snapshots/reset`, token, { snapshotCid: first })
    faults.catFails = false
    expectError(failed, 500, "Reset failed", { preResetCid: /^baf/ })
    const preResetCid = failed.body!["preResetCid"] as string
    assert.strictEqual((await listIt())[0]!["snapshotCid"], preResetCid)
    const events = (await api.request("GET", `/v0/agents/${id}/events`, token)).body!["events"] as Array<Record<string, any>>
    assert.isTrue(events.some((e) => e["type"] === "WorkspaceResetFailed"))
    // The gateway was started again, and the pre-reset snapshot brings the workspace back as it was.
    assert.strictEqual((await api.request("GET", `/v0/agents/${id}`, token)).body!["agent"].status, "running")
    assert.strictEqual((await api.request("POST", `/v0/agents/${id}/snapshots/reset`, token, { snapshotCid: preResetCid })).status, 200)
    const read = (path: string) =>
      api.runtime.runPromise(AgentEngine.use((engine) => engine.readWorkspaceFile(id, path)).pipe(Effect.map((bytes) => new TextDecoder().decode(bytes))))
    assert.strictEqual(await read("a.txt"), "second")
    assert.strictEqual(await read("b.txt"), "only in second")
  })
})

describe("automatic rounds", () => {
  const api = TestRuntime.makeTestApi({ snapshots: { deletedGraceMs: 0 } })
  afterAll(api.dispose)
  const round = () => api.runtime.runPromise(Snapshots.use((s) => s.round))

  it("snapshot running agents whose workspace changed, and remove a deleted agent's snapshots after the grace period", async () => {
    const token = (await api.key(await api.workspace(2))).token
    const id = await ApiKit.make(api.request).newAgent(token, "auto")
    const listIt = async () => (await api.request("GET", `/v0/agents/${id}/snapshots`, token)).body!["snapshots"] as Array<Record<string, any>>
    await api.control((c) => c.editWorkspaceFile(id, "journal.md", text("day one")))
    await round()
    const [auto] = await listIt()
    assert.strictEqual(auto!["trigger"], "auto")
    await round()
    assert.strictEqual((await listIt()).length, 1, "an unchanged workspace was snapshotted again")
    await api.control((c) => c.editWorkspaceFile(id, "journal.md", text("day two")))
    await round()
    assert.strictEqual((await listIt()).length, 2)

    const cid = auto!["snapshotCid"] as string
    // The workspace's last state is snapshotted on the way out.
    await api.control((c) => c.editWorkspaceFile(id, "journal.md", text("last words")))
    assert.strictEqual((await api.request("DELETE", `/v0/agents/${id}`, token)).status, 200)
    const kept = await api.runtime.runPromise(SqlClient.SqlClient.use((sql) => ReadModels.SnapshotsTable.queries(sql).page(id, 10, undefined)))
    assert.strictEqual(kept.snapshots.length, 3)
    await round()
    assert.isFalse(await api.runtime.runPromise(SnapshotStore.use((store) => store.has(cid))))
  })
})
