/**
 * Groups and self-service keys where concurrency decides, through the real routes on PGlite (or a fresh PostgreSQL
 * database under DATABASE_URL, where requests truly overlap): a group deleted while files join it keeps none of
 * them, whichever commits first; two groups never get one name; a key with `maxUses` authenticates exactly that many
 * of many simultaneous requests.
 */
import { TestRuntime } from "@cairn/runtime/testing"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"

const { web, request, workspace, key, dispose } = TestRuntime.makeTestApi()

let token: string

/** A multipart upload as the SDK sends it: the status, and the file's id when it was stored. */
const upload = async (name: string, groupId?: string) => {
  const form = new FormData()
  form.append("file", new File([name], `${name}.txt`, { type: "text/plain" }))
  form.append("network", "private")
  if (groupId !== undefined) form.append("group_id", groupId)
  const reply = await TestRuntime.replyOf(await web.handler(new Request("http://cairn/v3/files", { method: "POST", headers: { authorization: `Bearer ${token}` }, body: form })))
  return { status: reply.status, id: reply.body?.["data"]?.id as string | undefined, error: reply.body?.["error"] as string | undefined }
}

beforeAll(async () => {
  token = (await key(await workspace(1), ["org:files:read", "org:files:write", "org:groups:read", "org:groups:write", "org:keys"])).token
}, 120_000)

afterAll(dispose)

describe("groups under concurrency", () => {
  it("a group deleted while files join it keeps none of them, whichever commits first", async () => {
    const tally = { joined: 0, refused: 0 }
    for (let round = 0; round < 12; round++) {
      const group = (await request("POST", "/v3/groups/private", token, { name: `round ${round}` })).body!["data"].id as string
      const loose = await Promise.all([0, 1, 2].map((i) => upload(`loose-${round}-${i}`)))
      // The joins start at once, or a few milliseconds after the delete, so that over the rounds it wins and loses.
      const lag = (round % 4) * 3
      const later = <A>(send: () => Promise<A>) => lag === 0 ? send() : new Promise((resolve) => setTimeout(resolve, lag)).then(send)
      const joins = [
        ...loose.map(async (file) => (await later(() => request("PUT", `/v3/groups/private/${group}/ids/${file.id}`, token))).status),
        ...[0, 1].map(async (i) => (await later(() => upload(`into-${round}-${i}`, group))).status)
      ]
      const at = round % (joins.length + 1)
      const statuses = await Promise.all([...joins.slice(0, at), request("DELETE", `/v3/groups/private/${group}`, token).then((r) => r.status), ...joins.slice(at)])
      assert.strictEqual(statuses[at], 200)
      for (const status of statuses.filter((_, i) => i !== at)) {
        assert.include([200, 404], status)
        if (status === 200) tally.joined++
        else tally.refused++
      }
      const listed = await request("GET", `/v3/files/private?group=${group}&limit=100`, token)
      assert.deepStrictEqual(listed.body!["data"].files, [], `round ${round}: ${statuses.join(", ")}`)
      for (const file of loose) assert.strictEqual((await request("GET", `/v3/files/private/${file.id}`, token)).body!["data"].group_id, null)
    }
    // Both orders happened: joins refused after the delete (404 Group not found), and joins let go of with it.
    assert.isAbove(tally.refused, 0)
    assert.isAbove(tally.joined, 0)
  })

  it("gives a name to one of many groups created with it at once, and frees it on a rename or a delete", async () => {
    const created = await Promise.all([0, 1, 2, 3, 4].map(() => request("POST", "/v3/groups/public", token, { name: "same" })))
    assert.sameMembers(created.map((r) => r.status), [200, 409, 409, 409, 409])
    const first = created.find((r) => r.status === 200)!.body!["data"].id as string
    assert.strictEqual((await request("PUT", `/v3/groups/public/${first}`, token, { name: "other" })).status, 200)
    const second = (await request("POST", "/v3/groups/public", token, { name: "same" })).body!["data"].id as string
    assert.strictEqual((await request("DELETE", `/v3/groups/public/${second}`, token)).status, 200)
    assert.strictEqual((await request("POST", "/v3/groups/public", token, { name: "same" })).status, 200)
    const refused = await request("PUT", `/v3/groups/public/${first}`, token, { name: "same" })
    assert.deepStrictEqual([refused.status, refused.body], [409, { error: "Duplicate group name" }])
  })
})

describe("self-service keys under concurrency", () => {
  it("a key with maxUses admits exactly that many of many simultaneous requests, then says exhausted", async () => {
    const made = await request("POST", "/v3/pinata/keys", token, { keyName: "five", permissions: { resources: ["org:files:read"] }, maxUses: 5 })
    assert.strictEqual(made.status, 200, JSON.stringify(made.body))
    const limited = made.body!["JWT"] as string
    const replies = await Promise.all(Array.from({ length: 12 }, () => request("GET", "/v3/files/private?limit=1", limited)))
    assert.strictEqual(replies.filter((r) => r.status === 200).length, 5)
    const refused = replies.filter((r) => r.status !== 200)
    assert.deepStrictEqual(refused.map((r) => [r.status, r.body]), Array.from({ length: 7 }, () => [401, { error: "Unauthorized", reason: "exhausted" }]))
    const listed = await request("GET", "/v3/pinata/keys?name=five", token)
    assert.deepInclude(listed.body!["keys"][0], { max_uses: 5, uses: 5, revoked: false })
  })
})
