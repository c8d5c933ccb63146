/**
 * The disk reserve through the real routes: with the data directory's disk made to run low (a FreeSpace that
 * answers what the test says; no disk is filled), a `/v3` upload (multipart, declared or streamed, and resumable),
 * an agent's file upload and a snapshot (on demand, automatic, or a reset's pre-reset one) are refused with 507
 * `Insufficient storage` before anything is written: no event appended, no file, no snapshot, nothing staged. With
 * room they go through.
 */
import { AgentEngine } from "@cairn/agent-engine"
import { EventStore } from "@cairn/event-store"
import { FreeSpace, Snapshots } from "@cairn/application"
import { ApiKit, TestLogs, TestRuntime } from "@cairn/runtime/testing"
import { afterAll, assert, beforeAll, beforeEach, describe, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"

const MiB = 1024 ** 2
const reserve = 64 * MiB
const plenty = 100 * 1024 * MiB
let free = plenty

const api = TestRuntime.makeTestApi({ freeSpace: FreeSpace.layerTest(() => free), diskReserveBytes: reserve })
const { request, workspace, key, runtime, web, control } = api
afterAll(api.dispose)

const { expectError } = ApiKit
const { newAgent } = ApiKit.make(request)

// The routes' DATA_DIR: unset in tests, so the default.
const stagingRoot = path.resolve("./data/staging")
const staged = () => new Set(fs.existsSync(stagingRoot) ? fs.readdirSync(stagingRoot) : [])

const text = (value: string) => new TextEncoder().encode(value)
const bytes = (size: number) => new Uint8Array(size).fill(7)
const base64 = (content: Uint8Array) => Buffer.from(content).toString("base64")

/** A one-file multipart upload to `/v3/files`; its Content-Length declared unless `streamed`. */
const postFile = async (content: Uint8Array, options: { readonly streamed?: boolean } = {}) => {
  const boundary = `test-${crypto.randomUUID()}`
  const body = Buffer.concat([
    text(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`),
    content,
    text(`\r\n--${boundary}\r\nContent-Disposition: form-data; name="network"\r\n\r\npublic\r\n--${boundary}--\r\n`)
  ])
  const response = await web.handler(new Request("http://cairn/v3/files", {
    method: "POST",
    headers: {
      "content-type": `multipart/form-data; boundary=${boundary}`,
      authorization: `Bearer ${writer}`,
      ...(options.streamed === true ? {} : { "content-length": String(body.length) })
    },
    body
  }))
  return TestRuntime.replyOf(response)
}

const appends = () => runtime.runPromise(EventStore.use((store) => store.appendCount))
const fileCount = async () => {
  const listed = await request("GET", "/v3/files/public?limit=1000", writer)
  assert.strictEqual(listed.status, 200, JSON.stringify(listed.body))
  return (listed.body!["data"].files as Array<unknown>).length
}
const snapshotCount = async () => {
  const listed = await request("GET", `/v0/agents/${agentId}/snapshots?limit=100`, owner)
  assert.strictEqual(listed.status, 200, JSON.stringify(listed.body))
  return (listed.body!["snapshots"] as Array<unknown>).length
}

/** Runs `refused` and asserts it appended no event and left no file, snapshot or staged leaf behind. */
const nothingWritten = async (refused: () => Promise<void>) => {
  const before = { appends: await appends(), files: await fileCount(), snapshots: await snapshotCount(), staged: staged() }
  await refused()
  assert.strictEqual(await appends(), before.appends, "no event was appended")
  assert.strictEqual(await fileCount(), before.files, "no file was recorded")
  assert.strictEqual(await snapshotCount(), before.snapshots, "no snapshot was recorded")
  assert.deepStrictEqual([...staged()].filter((name) => !before.staged.has(name)), [], "nothing was staged")
}

let writer: string
let owner: string
let agentId: string

beforeAll(async () => {
  const workspaceId = await workspace(10)
  writer = (await key(workspaceId, ["org:files:read", "org:files:write"])).token
  owner = (await key(workspaceId)).token
  agentId = await newAgent(owner, "reserve")
}, 120_000)

beforeEach(() => {
  free = plenty
})

describe("with room above the reserve", () => {
  it("uploads and snapshots go through", async () => {
    free = reserve + 8 * MiB
    assert.strictEqual((await postFile(bytes(2 * MiB))).status, 200)
    assert.strictEqual((await request("POST", `/v0/agents/${agentId}/files/upload`, owner, { filename: "ok.bin", contentBase64: base64(bytes(2 * MiB)) })).status, 200)
    assert.strictEqual((await request("POST", `/v0/agents/${agentId}/snapshots/sync`, owner)).status, 200)
  })
})

describe("below the reserve", () => {
  it("a /v3 upload whose declared size would eat into the reserve is 507 before a byte is staged", async () => {
    // 6 MiB is past the in-memory limit: admitted, its part would be staged on disk as it arrives.
    free = reserve + 2 * MiB
    await nothingWritten(async () => expectError(await postFile(bytes(6 * MiB)), 507, "Insufficient storage"))
    // The refusal is logged with the numbers (never the content).
    assert.isTrue(TestLogs.lines().some((line) => /Refused a write of \d+ bytes: \d+ bytes free .*67108864 kept in reserve \(DISK_RESERVE\)/.test(line)), TestLogs.lines().join("\n"))
    // A small one still fits above the reserve.
    assert.strictEqual((await postFile(bytes(1024))).status, 200)
  })

  it("a streamed /v3 upload (no Content-Length) is 507 once the disk is down to the reserve", async () => {
    free = reserve
    await nothingWritten(async () => expectError(await postFile(bytes(1024), { streamed: true }), 507, "Insufficient storage"))
  })

  it("a resumable upload is 507 when its Upload-Length would eat into the reserve", async () => {
    free = reserve + MiB
    await nothingWritten(async () => {
      const response = await web.handler(new Request("http://cairn/v3/files", {
        method: "POST",
        headers: { authorization: `Bearer ${writer}`, "upload-length": String(2 * MiB), "upload-metadata": `filename ${btoa("big.bin")}` }
      }))
      expectError(await TestRuntime.replyOf(response), 507, "Insufficient storage")
    })
  })

  it("an agent's file upload is 507 and its file is not written", async () => {
    free = reserve + MiB
    await nothingWritten(async () => {
      const refused = await request("POST", `/v0/agents/${agentId}/files/upload`, owner, { filename: "big.bin", contentBase64: base64(bytes(2 * MiB)) })
      expectError(refused, 507, "Insufficient storage")
    })
    free = plenty
    expectError(await request("GET", `/v0/agents/${agentId}/files?path=uploads/big.bin`, owner), 404, "File not found")
  })

  it("a snapshot sync is 507 when the files it would read would eat into the reserve, and an automatic one records nothing", async () => {
    await control((c) => c.editWorkspaceFile(agentId, "big.bin", bytes(2 * MiB)))
    free = reserve + MiB
    await nothingWritten(async () => {
      expectError(await request("POST", `/v0/agents/${agentId}/snapshots/sync`, owner), 507, "Insufficient storage")
      await runtime.runPromise(Snapshots.use((snapshots) => snapshots.round))
    })
    // With room again, the next automatic round snapshots the same workspace, and so does a sync of a change.
    free = plenty
    const before = await snapshotCount()
    await runtime.runPromise(Snapshots.use((snapshots) => snapshots.round))
    assert.strictEqual(await snapshotCount(), before + 1)
    await control((c) => c.editWorkspaceFile(agentId, "big.bin", bytes(MiB)))
    assert.strictEqual((await request("POST", `/v0/agents/${agentId}/snapshots/sync`, owner)).status, 200)
  })

  it("a reset is 507 when its pre-reset snapshot would eat into the reserve, and leaves the workspace as it was", async () => {
    const synced = await request("POST", `/v0/agents/${agentId}/snapshots/sync`, owner)
    assert.strictEqual(synced.status, 200, JSON.stringify(synced.body))
    const changed = new Uint8Array(2 * MiB).fill(9)
    await control((c) => c.editWorkspaceFile(agentId, "big.bin", changed))
    free = reserve + MiB
    await nothingWritten(async () => {
      const refused = await request("POST", `/v0/agents/${agentId}/snapshots/reset`, owner, { snapshotCid: synced.body!["snapshotCid"] })
      expectError(refused, 507, "Insufficient storage")
    })
    const kept = await runtime.runPromise(AgentEngine.use((engine) => engine.readWorkspaceFile(agentId, "big.bin")))
    assert.deepStrictEqual(kept, changed)
  })
})
