/**
 * Groups on both networks as a user of the official pinata SDK meets them: `groups.public` and `groups.private`
 * (create, list with its filters and pages, get, update, add and remove files, delete), uploads into a group, and the
 * file list's `group` filter, against a real server on loopback with its embedded stores (or the PostgreSQL server
 * DATABASE_URL names: CI runs the suite on both). Every refusal answers a clear 4xx and stores nothing.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { PinataSDK } from "pinata"
import { type ServerProcess, cli, cliResult, serverFetch, startServer, stopServer, waitUntilServing } from "../src/testing/index.ts"

const dataDir = mkdtempSync(join(tmpdir(), "cairn-groups-"))
let server: ServerProcess
let env: { url: string; dataDir: string }
let workspaceId: string
let token: string
let pinata: PinataSDK

const sdk = (jwt: string) =>
  new PinataSDK({
    pinataJwt: jwt,
    pinataGateway: "127.0.0.1",
    endpointUrl: `${server.url}/v3`,
    uploadUrl: `${server.url}/v3`,
    legacyUploadUrl: `${server.url}/pinning/pinFileToIPFS`
  })
const newKey = (workspace: string, scopes: string) => cli(env, "key", "create", "--workspace", workspace, "--user", "ada", "--scopes", scopes)

const call = (path: string, init: RequestInit & { token?: string } = {}) => serverFetch(server)(path, init)
const json = (method: string, path: string, body: unknown, as = token) =>
  call(path, { method, token: as, headers: { "content-type": "application/json" }, body: typeof body === "string" ? body : JSON.stringify(body) })

/** The status and `error` string of a failed answer. */
const refusal = async (response: Response | Promise<Response>) => {
  const answered = await response
  assert.match(answered.headers.get("content-type") ?? "", /^application\/json/)
  return { status: answered.status, error: ((await answered.json()) as { error: string }).error }
}

/** What the SDK threw: its status and message (`HTTP error: <body>`). */
const sdkFailure = async (promise: PromiseLike<unknown>) => {
  try {
    await promise
  } catch (error) {
    return { status: (error as { statusCode?: number }).statusCode, message: (error as Error).message }
  }
  return assert.fail("the SDK call was expected to fail")
}

/** Every file of the workspace on the network, by id (the SDK's auto-pagination). */
const allFiles = async (network: "public" | "private") => (await pinata.files[network].list().limit(100).all()).map((f) => f.id)

const unique = () => crypto.randomUUID().slice(0, 8)

beforeAll(async () => {
  server = await startServer({ DATA_DIR: dataDir })
  await waitUntilServing(server)
  env = { url: server.url, dataDir }
  workspaceId = cli(env, "workspace", "create", "--name", "Groups")
  token = newKey(workspaceId, "org:files:read,org:files:write,org:groups:read,org:groups:write")
  pinata = sdk(token)
}, 120_000)

afterAll(() => stopServer(server, dataDir))

describe.each(["public", "private"] as const)("groups on the %s network through the official pinata SDK", (network) => {
  const other = network === "public" ? "private" : "public"

  it("creates, gets, renames and marks public a group, answering every field the SDK and Pinata's API name", async () => {
    const name = `Album ${unique()}`
    const created = await pinata.groups[network].create({ name })
    assert.deepInclude(created, { name, is_public: false })
    assert.match(created.id, /^[0-9a-f-]{36}$/)
    assert.match(created.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    assert.strictEqual((created as unknown as { created_at: string }).created_at, created.createdAt)
    assert.deepStrictEqual(await pinata.groups[network].get({ groupId: created.id }), created)

    const renamed = await pinata.groups[network].update({ groupId: created.id, name: `${name} 2`, isPublic: true })
    assert.deepStrictEqual(renamed, { ...created, name: `${name} 2`, is_public: true })
    // What an update leaves out is kept.
    const flagged = await pinata.groups[network].update({ groupId: created.id, isPublic: false })
    assert.deepStrictEqual(flagged, { ...renamed, is_public: false })
    assert.deepStrictEqual(await pinata.groups[network].get({ groupId: created.id }), flagged)
    const marked = await pinata.groups[network].create({ name: `Public ${unique()}`, isPublic: true })
    assert.strictEqual(marked.is_public, true)
  })

  it("lists newest first with name and isPublic filters, and pages until next_page_token is empty", async () => {
    const tag = unique()
    const made = []
    for (const i of [0, 1, 2, 3, 4]) made.push(await pinata.groups[network].create({ name: `list-${tag}-${i}`, isPublic: i % 2 === 0 }))
    const byName = await pinata.groups[network].list().name(`list-${tag}`)
    assert.deepStrictEqual(byName.groups.map((g) => g.name), made.map((g) => g.name).reverse())
    assert.strictEqual(byName.next_page_token, "")
    const shouting = await pinata.groups[network].list().name(`LIST-${tag}-3`)
    assert.deepStrictEqual(shouting.groups.map((g) => g.id), [made[3]!.id], "the name filter is a case-insensitive substring")
    const publicOnes = await pinata.groups[network].list().name(`list-${tag}`).isPublic(true)
    assert.deepStrictEqual(publicOnes.groups.map((g) => g.name), [made[4]!, made[2]!, made[0]!].map((g) => g.name))
    // The SDK sends isPublic only when true; the API takes false too.
    const privateOnes = await json("GET", `/v3/groups/${network}?name=list-${tag}&isPublic=false`, undefined)
    assert.deepStrictEqual(((await privateOnes.json()) as { data: { groups: Array<{ name: string }> } }).data.groups.map((g) => g.name), [made[3]!, made[1]!].map((g) => g.name))

    const page = await pinata.groups[network].list().name(`list-${tag}`).limit(2)
    assert.strictEqual(page.groups.length, 2)
    assert.notStrictEqual(page.next_page_token, "")
    const next = await pinata.groups[network].list().name(`list-${tag}`).limit(2).pageToken(page.next_page_token)
    assert.deepStrictEqual(next.groups.map((g) => g.id), [made[2]!.id, made[1]!.id])
    const all = await pinata.groups[network].list().name(`list-${tag}`).limit(2).all()
    assert.deepStrictEqual(all.map((g) => g.id), made.map((g) => g.id).reverse())
    const iterated = []
    for await (const group of pinata.groups[network].list().name(`list-${tag}`).limit(3)) iterated.push(group.id)
    assert.deepStrictEqual(iterated, made.map((g) => g.id).reverse())
    // Only this network's groups are listed.
    assert.deepStrictEqual((await pinata.groups[other].list().name(`list-${tag}`)).groups, [])
  })

  it("uploads into a group, adds and removes files, and filters the file list by group", async () => {
    const group = await pinata.groups[network].create({ name: `Files ${unique()}` })
    const inside = await pinata.upload[network].file(new File(["in the group"], "in.txt", { type: "text/plain" })).group(group.id)
    assert.strictEqual(inside.group_id, group.id)
    const a = await pinata.upload[network].file(new File(["a"], "a.txt", { type: "text/plain" }))
    const b = await pinata.upload[network].file(new File(["b"], "b.txt", { type: "text/plain" }))
    assert.strictEqual(a.group_id, null)

    const added = await pinata.groups[network].addFiles({ groupId: group.id, files: [a.id, b.id] })
    assert.deepStrictEqual(added, [{ id: a.id, status: "OK" }, { id: b.id, status: "OK" }])
    // Adding a file that is already there is a success and changes nothing.
    assert.deepStrictEqual(await pinata.groups[network].addFiles({ groupId: group.id, files: [a.id] }), [{ id: a.id, status: "OK" }])
    const listed = await pinata.files[network].list().group(group.id)
    assert.sameMembers(listed.files.map((f) => f.id), [inside.id, a.id, b.id])
    assert.strictEqual((await pinata.files[network].get(a.id)).group_id, group.id)
    const ungrouped = (await pinata.files[network].list().noGroup(true).limit(1000)).files.map((f) => f.id)
    assert.notInclude(ungrouped, a.id)

    const removed = await pinata.groups[network].removeFiles({ groupId: group.id, files: [a.id] })
    assert.deepStrictEqual(removed, [{ id: a.id, status: "OK" }])
    assert.sameMembers((await pinata.files[network].list().group(group.id)).files.map((f) => f.id), [inside.id, b.id])
    assert.strictEqual((await pinata.files[network].get(a.id)).group_id, null)
    assert.include((await pinata.files[network].list().noGroup(true).limit(1000)).files.map((f) => f.id), a.id)

    // A file moves from one group to another: it is in one group at most.
    const second = await pinata.groups[network].create({ name: `Second ${unique()}` })
    await pinata.groups[network].addFiles({ groupId: second.id, files: [b.id] })
    assert.deepStrictEqual((await pinata.files[network].list().group(group.id)).files.map((f) => f.id), [inside.id])
    assert.deepStrictEqual((await pinata.files[network].list().group(second.id)).files.map((f) => f.id), [b.id])
    // Folders join groups as files do.
    if (network === "public") {
      const folder = await pinata.upload.public.fileArray([new File(["x"], "x.txt"), new File(["y"], "y.txt")])
      await pinata.groups.public.addFiles({ groupId: group.id, files: [folder.id] })
      assert.include((await pinata.files.public.list().group(group.id)).files.map((f) => f.id), folder.id)
    }
  })

  it("deletes a group and leaves its files, in no group; its name is free again", async () => {
    const name = `Doomed ${unique()}`
    const group = await pinata.groups[network].create({ name })
    const file = await pinata.upload[network].file(new File(["kept"], "kept.txt", { type: "text/plain" })).group(group.id)
    assert.strictEqual(await pinata.groups[network].delete({ groupId: group.id }), "OK")
    const gone = await sdkFailure(pinata.groups[network].get({ groupId: group.id }))
    assert.deepStrictEqual(gone, { status: 404, message: `HTTP error: {"error":"Group not found"}` })
    const kept = await pinata.files[network].get(file.id)
    assert.strictEqual(kept.group_id, null)
    assert.deepStrictEqual((await pinata.files[network].list().group(group.id)).files, [])
    // The file's own record still names the group it joined; what it answers is the table's word: no group.
    assert.strictEqual((await pinata.files[network].update({ id: file.id, name: "renamed.txt" })).group_id, null)
    // Deleting again, or changing the deleted group, is 404.
    assert.strictEqual((await sdkFailure(pinata.groups[network].delete({ groupId: group.id }))).status, 404)
    assert.strictEqual((await sdkFailure(pinata.groups[network].update({ groupId: group.id, name: "x" }))).status, 404)
    assert.deepStrictEqual(await pinata.groups[network].addFiles({ groupId: group.id, files: [file.id] }), [
      { id: file.id, status: `HTTP error: {"error":"Group not found"}` }
    ])
    assert.strictEqual((await pinata.groups[network].create({ name })).name, name)
  })

  it("refuses an upload into a group that does not exist, is the other network's or another workspace's, storing nothing", async () => {
    const before = await allFiles(network)
    const foreign = await pinata.groups[other].create({ name: `Foreign ${unique()}` })
    const elsewhere = newKey(cli(env, "workspace", "create", "--name", "Elsewhere"), "org:groups:write")
    const theirs = (await (await json("POST", `/v3/groups/${network}`, { name: "Theirs" }, elsewhere)).json()) as { data: { id: string } }
    for (const groupId of [crypto.randomUUID(), foreign.id, theirs.data.id]) {
      const failed = await sdkFailure(pinata.upload[network].file(new File(["never stored"], "no.txt")).group(groupId))
      assert.deepStrictEqual(failed, { status: 404, message: `HTTP error: {"error":"Group not found"}` })
      // The group's routes do not find it either.
      assert.strictEqual((await sdkFailure(pinata.groups[network].get({ groupId }))).status, 404)
    }
    // A resumable upload is refused at its start, before a byte is sent.
    const metadata = [`filename ${btoa("big.bin")}`, `network ${btoa(network)}`, `group_id ${btoa(foreign.id)}`].join(",")
    const resumable = call("/v3/files", { method: "POST", token, headers: { "upload-length": "1000", "upload-metadata": metadata } })
    assert.deepStrictEqual(await refusal(resumable), { status: 404, error: "Group not found" })
    if (network === "public") {
      // Pinata's legacy pin too (the SDK's fileArray, with the group in pinataOptions).
      const failed = await sdkFailure(pinata.upload.public.fileArray([new File(["x"], "x.txt"), new File(["z"], "z.txt")]).group(crypto.randomUUID()))
      assert.match(failed.message, /Group not found/)
    }
    assert.deepStrictEqual(await allFiles(network), before, "nothing was stored")
  })

  it("keeps a workspace's group names distinct on a network, as Pinata does", async () => {
    const name = `Twice ${unique()}`
    const first = await pinata.groups[network].create({ name })
    const again = await sdkFailure(pinata.groups[network].create({ name }))
    assert.deepStrictEqual(again, { status: 409, message: `HTTP error: {"error":"Duplicate group name"}` })
    // The other network, and another name, are free; a rename onto a taken name is refused too.
    assert.strictEqual((await pinata.groups[other].create({ name })).name, name)
    const second = await pinata.groups[network].create({ name: `${name} b` })
    assert.strictEqual((await sdkFailure(pinata.groups[network].update({ groupId: second.id, name }))).status, 409)
    // Renaming frees the old name.
    await pinata.groups[network].update({ groupId: first.id, name: `${name} c` })
    assert.strictEqual((await pinata.groups[network].update({ groupId: second.id, name })).name, name)
  })

  it("answers unknown files and groups in addFiles and removeFiles per file, as the SDK reports them", async () => {
    const group = await pinata.groups[network].create({ name: `Per file ${unique()}` })
    const mine = await pinata.upload[network].file(new File(["mine"], "mine.txt"))
    const theirs = await pinata.upload[other].file(new File(["other network"], "other.txt"))
    const missing = crypto.randomUUID()
    const added = await pinata.groups[network].addFiles({ groupId: group.id, files: [mine.id, missing, theirs.id] })
    assert.deepStrictEqual(added, [
      { id: mine.id, status: "OK" },
      { id: missing, status: `HTTP error: {"error":"File not found"}` },
      { id: theirs.id, status: `HTTP error: {"error":"File not found"}` }
    ])
    assert.deepStrictEqual(await pinata.groups[network].removeFiles({ groupId: missing, files: [mine.id] }), [
      { id: mine.id, status: `HTTP error: {"error":"Group not found"}` }
    ])
    // Removing a file that is not in the group leaves it where it is.
    assert.deepStrictEqual(await pinata.groups[network].removeFiles({ groupId: group.id, files: [theirs.id] }), [
      { id: theirs.id, status: `HTTP error: {"error":"File not found"}` }
    ])
    const elsewhere = await pinata.groups[network].create({ name: `Elsewhere ${unique()}` })
    assert.deepStrictEqual(await pinata.groups[network].removeFiles({ groupId: elsewhere.id, files: [mine.id] }), [{ id: mine.id, status: "OK" }])
    assert.strictEqual((await pinata.files[network].get(mine.id)).group_id, group.id)
  })
})

describe("bad input to the groups API", () => {
  it("answers 400 with what was wrong, and stores nothing", async () => {
    const before = (await pinata.groups.public.list().limit(1000)).groups.length
    const cases: Array<[Promise<Response>, string]> = [
      [json("POST", "/v3/groups/nope", { name: "x" }), `Validation failed: network must be public or private, not "nope"`],
      [json("POST", "/v3/groups/public", { name: "x".repeat(256) }), "Validation failed: name must be at most 255 characters"],
      [json("POST", "/v3/groups/public", { name: "  " }), "Validation failed: name must not be blank"],
      [json("POST", "/v3/groups/public", { name: "a\u0007b" }), "Validation failed: name must not contain control characters"],
      [json("POST", "/v3/groups/public", {}), "Validation failed: Missing key at [\"name\"]"],
      [json("POST", "/v3/groups/public", { name: "x", is_public: "yes" }), `Validation failed: Expected boolean at ["is_public"]`],
      [json("POST", "/v3/groups/public", "{not json"), "Validation failed: the request body is not valid JSON"],
      [json("GET", "/v3/groups/public?limit=0", undefined), "Validation failed: limit must be a whole number from 1 to 1000"],
      [json("GET", "/v3/groups/public?isPublic=maybe", undefined), "Validation failed: isPublic must be true or false"],
      [json("GET", "/v3/groups/public?pageToken=bogus", undefined), "Validation failed: pageToken is not a token this service issued"],
      [json("GET", "/v3/groups/elsewhere/abc", undefined), `Validation failed: network must be public or private, not "elsewhere"`]
    ]
    const answered = await Promise.all(cases.map(async ([response]) => await refusal(response)))
    assert.deepStrictEqual(answered, cases.map(([, error]) => ({ status: 400, error })))
    const group = await pinata.groups.public.create({ name: `Bad input ${unique()}` })
    assert.deepStrictEqual(await refusal(json("PUT", `/v3/groups/public/${group.id}`, {})), { status: 400, error: "Validation failed: give a name or is_public to update" })
    assert.deepStrictEqual(await refusal(json("PUT", `/v3/groups/public/${group.id}`, { name: "y".repeat(300) })), {
      status: 400,
      error: "Validation failed: name must be at most 255 characters"
    })
    assert.strictEqual((await pinata.groups.public.get({ groupId: group.id })).name, group.name)
    assert.strictEqual((await pinata.groups.public.list().limit(1000)).groups.length, before + 1)
  })

  it("refuses a key without the groups scopes (403) and a request without a key (401)", async () => {
    const filesOnly = newKey(workspaceId, "org:files:read,org:files:write")
    assert.deepStrictEqual(await refusal(json("GET", "/v3/groups/public", undefined, filesOnly)), {
      status: 403,
      error: "Forbidden: this key lacks the org:groups:read scope"
    })
    assert.deepStrictEqual(await refusal(json("POST", "/v3/groups/public", { name: "no" }, filesOnly)), {
      status: 403,
      error: "Forbidden: this key lacks the org:groups:write scope"
    })
    const reader = newKey(workspaceId, "org:groups:read")
    assert.strictEqual((await json("GET", "/v3/groups/private", undefined, reader)).status, 200)
    assert.strictEqual((await json("DELETE", `/v3/groups/private/${crypto.randomUUID()}`, undefined, reader)).status, 403)
    assert.strictEqual((await call("/v3/groups/public")).status, 401)
  })

  it("documents every groups route in /openapi.json", async () => {
    const document = (await (await call("/openapi.json")).json()) as { paths: Record<string, Record<string, unknown>> }
    assert.sameMembers(Object.keys(document.paths["/v3/groups/{network}"] ?? {}), ["get", "post"])
    assert.sameMembers(Object.keys(document.paths["/v3/groups/{network}/{groupId}"] ?? {}), ["get", "put", "delete"])
    assert.sameMembers(Object.keys(document.paths["/v3/groups/{network}/{groupId}/ids/{fileId}"] ?? {}), ["put", "delete"])
  })
})

// Last: it stops the server (the CLI opens the embedded database itself).
describe("the read models", () => {
  it("are what a rebuild from the log gives: groups, and the files that joined and left them", async () => {
    server.child.kill("SIGTERM")
    assert.strictEqual(await server.exited, 0, server.output())
    for (const name of ["groups", "files"]) {
      const checked = cliResult(env, "replay", name)
      assert.strictEqual(checked.status, 0, checked.stdout + checked.stderr)
      assert.include(checked.stdout, `${name}: equal`)
    }
  })
})
