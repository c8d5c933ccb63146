/**
 * Removing a pin through the Pinning Service API when its job was pinned a moment before the remove read it: the
 * read model still shows it pinning (a pin recorded between the route's read and its decision, which CI's loaded
 * Postgres pass met), and the remove is decided on the job's own history, so it is removed with its file, 202 as
 * the spec says, never 409. The test holds the read model at "pinning" by hand so that the moment is met every run;
 * TestRuntime runs no pin worker, so the job is pinned here as the worker records it (`Files.recordPin`).
 */
import { Files } from "@cairn/application"
import { TestRuntime } from "@cairn/runtime/testing"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

const { web, request, workspace, key, runtime, dispose } = TestRuntime.makeTestApi()

let token: string
let workspaceId: string

beforeAll(async () => {
  workspaceId = await workspace(1)
  token = (await key(workspaceId, ["org:files:read", "org:files:write"])).token
}, 120_000)

afterAll(dispose)

const sql = <A>(f: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) => runtime.runPromise(SqlClient.SqlClient.use(f))

/** A pin added through the API and pinned as the worker records it: its request id and its file's id. */
const pinnedWithStaleReadModel = async () => {
  const form = new FormData()
  form.append("file", new File(["pinned content"], "pinned.txt", { type: "text/plain" }))
  form.append("network", "public")
  const uploaded = await TestRuntime.replyOf(await web.handler(new Request("http://cairn/v3/files", { method: "POST", headers: { authorization: `Bearer ${token}` }, body: form })))
  const cid = uploaded.body!["data"].cid as string
  const added = await request("POST", "/pins", token, { cid, name: "raced" })
  assert.strictEqual(added.status, 202, JSON.stringify(added.body))
  const requestid = (added.body as unknown as { requestid: string }).requestid
  const [job] = await sql((s) => s<{ user_id: string }>`SELECT user_id FROM cairn_pin_jobs WHERE id = ${requestid}`)
  const fileId = await runtime.runPromise(Files.use((files) =>
    files.recordPin({ jobId: requestid, workspaceId, userId: job!.user_id, network: "public", cid, size: 14, name: "raced", mimeType: "text/plain", groupId: null, keyvalues: {}, numberOfFiles: 1 })))
  // What a route reading the job a moment before the pin was recorded saw.
  await sql((s) => s`UPDATE cairn_pin_jobs SET status = 'retrieving', file_id = NULL WHERE id = ${requestid}`)
  assert.strictEqual((await request("GET", `/pins/${requestid}`, token)).body!["status"], "pinning")
  return { requestid, fileId }
}

describe("a pin removed as it is pinned", () => {
  it("is removed with its file (202), decided on the job's history rather than a read model that lags behind it", async () => {
    const { requestid, fileId } = await pinnedWithStaleReadModel()
    assert.strictEqual((await request("GET", `/v3/files/public/${fileId}`, token)).status, 200)
    const removed = await web.handler(new Request(`http://cairn/pins/${requestid}`, { method: "DELETE", headers: { authorization: `Bearer ${token}` } }))
    assert.strictEqual(removed.status, 202, await removed.text())
    assert.strictEqual((await request("GET", `/pins/${requestid}`, token)).status, 404)
    assert.strictEqual((await request("GET", `/v3/files/public/${fileId}`, token)).status, 404)
  })

  it("is replaced: the new pin is made and the old one removed with its file, not a 409 leaving both", async () => {
    const { requestid, fileId } = await pinnedWithStaleReadModel()
    const replaced = await request("POST", `/pins/${requestid}`, token, { cid: "bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku", name: "replacement" })
    assert.strictEqual(replaced.status, 202, JSON.stringify(replaced.body))
    assert.notStrictEqual((replaced.body as unknown as { requestid: string }).requestid, requestid)
    assert.strictEqual((await request("GET", `/pins/${requestid}`, token)).status, 404)
    assert.strictEqual((await request("GET", `/v3/files/public/${fileId}`, token)).status, 404)
  })
})
