/**
 * Skills through the real routes, on the simulated engine: the library (a stored folder CID, an uploaded archive,
 * versions by name), bad bundles that leave nothing behind, attaching up to 10 into the agent's workspace,
 * detaching, and updates that refuse to overwrite files changed inside the agent. Runs on PGlite, and on a fresh
 * Postgres database when DATABASE_URL is set.
 */
import { AgentEngine } from "@cairn/agent-engine"
import { ContentStore } from "@cairn/content-store"
import { Archive } from "@cairn/skill-hub"
import { ApiKit, TestRuntime } from "@cairn/runtime/testing"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect, Stream } from "effect"

const api = TestRuntime.makeTestApi()
const { request, workspace, key, runtime, web } = api
afterAll(api.dispose)

const text = (s: string) => new TextEncoder().encode(s)
const skillMd = (name: string, description = `The ${name} skill`, extra = "") =>
  `---\nname: ${name}\ndescription: ${description}\n${extra}---\n\n# ${name}\n\nUse {baseDir}/scripts/run.sh.\n`
const folder = (name: string, body = "echo hi", extra = "") => [
  { path: "SKILL.md", content: text(skillMd(name, `The ${name} skill`, extra)) },
  { path: "scripts/run.sh", content: text(`#!/bin/sh\n${body}\n`) },
  { path: ".env.example", content: text("# The key the weather service gives you\nWEATHER_API_KEY=\nexport UNITS=metric\n") }
]
const store = (files: ReadonlyArray<{ path: string; content: Uint8Array }>) =>
  runtime.runPromise(ContentStore.use((c) => c.addDirectory(files, { network: "public" })).pipe(Effect.map((a) => a.cid)))
const engine = <A>(f: (e: AgentEngine["Service"]) => Effect.Effect<A, unknown>) => runtime.runPromise(AgentEngine.use(f) as Effect.Effect<A>)
const decoded = (bytes: Uint8Array | undefined) => (bytes === undefined ? undefined : new TextDecoder().decode(bytes))

const { expectError } = ApiKit
const { newAgent } = ApiKit.make(request)
const register = (token: string, skillCid: unknown, extra: Record<string, unknown> = {}) =>
  request("POST", "/v0/skills", token, { skillCid, ...extra })
const uploadArchive = async (token: string, body: BodyInit, type = "application/zip"): Promise<TestRuntime.Reply> => {
  const response = await web.handler(new Request("http://cairn/v0/skills", {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": type },
    body,
    ...(body instanceof ReadableStream ? { duplex: "half" } : {})
  } as RequestInit))
  return TestRuntime.replyOf(response)
}
const librarySize = async (token: string) => ((await request("GET", "/v0/skills", token)).body!["skills"] as Array<unknown>).length

let owner: string
beforeAll(async () => {
  owner = (await key(await workspace(20))).token
}, 120_000)

describe("the skill library", () => {
  it("registers a stored folder by its CID, reading name, description and variables from the folder", async () => {
    const cid = await store(folder("weather"))
    const created = await register(owner, cid)
    assert.strictEqual(created.status, 201, JSON.stringify(created.body))
    const skill = created.body!["skill"]
    assert.strictEqual(skill.skillCid, cid)
    assert.strictEqual(skill.name, "weather")
    assert.strictEqual(skill.description, "The weather skill")
    assert.strictEqual(skill.source, "cid")
    assert.deepStrictEqual(skill.envVars, [{ name: "WEATHER_API_KEY", description: "The key the weather service gives you" }, { name: "UNITS" }])
    const listed = (await request("GET", "/v0/skills", owner)).body!
    assert.deepStrictEqual(listed["skills"].find((s: { skillId: string }) => s.skillId === skill.skillId), skill)
    assert.strictEqual(listed["currentUserId"], "ada")
  })

  it("refuses folders that are no skill: 400 Validation failed, and the library is unchanged", async () => {
    const before = await librarySize(owner)
    expectError(await request("POST", "/v0/skills", owner, {}), 400, "Validation failed: skillCid is required")
    const missing = await store([{ path: "README.md", content: text("no skill here") }])
    expectError(await register(owner, missing), 400, "Validation failed: the skill folder has no SKILL.md at its root")
    expectError(await register(owner, await store([{ path: "SKILL.md", content: text("# no front matter") }])), 400,
      "Validation failed: SKILL.md must start with YAML front matter between --- lines")
    expectError(await register(owner, await store([{ path: "SKILL.md", content: text("---\nname: [oops\n---\n") }])), 400,
      /^Validation failed: SKILL.md front matter is not valid YAML/)
    expectError(await register(owner, await store([{ path: "SKILL.md", content: text(skillMd("bad name")) }])), 400,
      `Validation failed: skill name "bad name" may only contain letters, digits, - and _`)
    expectError(await register(owner, await store([{ path: "SKILL.md", content: text("---\nname: nodesc\n---\n") }])), 400,
      "Validation failed: SKILL.md front matter needs a description")
    const file = await runtime.runPromise(ContentStore.use((c) => c.add(Stream.make(text("just a file")), { network: "public" })).pipe(Effect.map((a) => a.cid)))
    expectError(await register(owner, file), 400, /^Validation failed: skillCid .* is not a folder/)
    expectError(await register(owner, "bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi"), 400, /^Validation failed: skillCid .* is not a folder/)
    expectError(await register(owner, await store(folder("weather")), { name: "other" }), 400, /differs from SKILL.md's name/)
    assert.strictEqual(await librarySize(owner), before)
  })

  it("takes a folder whose SKILL.md names a library skill as that skill's next version, and refuses one it has", async () => {
    const token = (await key(await workspace(5))).token
    const first = (await register(token, await store(folder("notes", "echo v1")))).body!["skill"]
    const second = await register(token, await store(folder("notes", "echo v2", "version: 2.0.0\n")))
    assert.strictEqual(second.status, 201)
    assert.strictEqual(second.body!["skill"].skillId, first.skillId)
    assert.strictEqual(second.body!["skill"].version, "2.0.0")
    assert.notStrictEqual(second.body!["skill"].skillCid, first.skillCid)
    expectError(await register(token, first.skillCid), 409, "Skill notes is already in the library")
    assert.strictEqual(await librarySize(token), 1)
  })

  it("takes an uploaded zip or gzipped tar of a skill folder", async () => {
    const token = (await key(await workspace(5))).token
    const zipped = await uploadArchive(token, Archive.writeZip(folder("zipped")))
    assert.strictEqual(zipped.status, 201, JSON.stringify(zipped.body))
    assert.strictEqual(zipped.body!["skill"].source, "upload")
    assert.strictEqual(zipped.body!["skill"].name, "zipped")
    assert.strictEqual(await librarySize(token), 1)
  })

  it("refuses bad bundles with 400 and keeps nothing: traversal, links, a 100 MB archive, no SKILL.md", async () => {
    const token = (await key(await workspace(5))).token
    const zipOf = (files: ReadonlyArray<{ path: string; content: Uint8Array }>) => Archive.writeZip(files)
    expectError(await uploadArchive(token, zipOf([...folder("escape"), { path: "../outside.txt", content: text("x") }])), 400, /^Validation failed: /)
    expectError(await uploadArchive(token, zipOf([{ path: "README.md", content: text("x") }])), 400, "Validation failed: the skill folder has no SKILL.md at its root")
    expectError(await uploadArchive(token, text("this is not an archive")), 400, /^Validation failed: /)
    let sent = 0
    const hundredMegabytes = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= 100 * 1024 * 1024) return controller.close()
        sent += 1024 * 1024
        controller.enqueue(new Uint8Array(1024 * 1024))
      }
    })
    expectError(await uploadArchive(token, hundredMegabytes, "application/gzip"), 400, /^Validation failed: the archive is larger than/)
    assert.isBelow(sent, 100 * 1024 * 1024, "the body was not read to its end")
    assert.strictEqual(await librarySize(token), 0)
  })

  it("removes a skill by id or by CID, and says when it was not there", async () => {
    const token = (await key(await workspace(5))).token
    const skill = (await register(token, await store(folder("gone")))).body!["skill"]
    const removed = await request("DELETE", `/v0/skills/${skill.skillCid}`, token)
    assert.deepStrictEqual(removed.body, { success: true, message: "Skill removed from the library", wasInLibrary: true })
    const again = await request("DELETE", `/v0/skills/${skill.skillId}`, token)
    assert.strictEqual(again.body!["wasInLibrary"], false)
    // The name is free again.
    assert.strictEqual((await register(token, await store(folder("gone")))).status, 201)
  })

  it("keeps each workspace's library to itself", async () => {
    const other = (await key(await workspace(5))).token
    const mine = (await register(owner, await store(folder("private-skill")))).body!["skill"]
    assert.isFalse(((await request("GET", "/v0/skills", other)).body!["skills"] as Array<{ skillId: string }>).some((s) => s.skillId === mine.skillId))
    assert.strictEqual((await request("DELETE", `/v0/skills/${mine.skillId}`, other)).body!["wasInLibrary"], false)
  })
})

describe("an agent's skills", () => {
  it("attaches library skills into the agent's workspace, lists and detaches them", async () => {
    const agentId = await newAgent(owner)
    const files = folder("attach-me")
    const skill = (await register(owner, await store(files))).body!["skill"]
    const attached = await request("POST", `/v0/agents/${agentId}/skills`, owner, { skillCids: [skill.skillCid] })
    assert.deepStrictEqual(attached.body, { success: true, attached: 1 })
    const installed = await engine((e) => e.readSkill(agentId, "attach-me"))
    assert.deepStrictEqual(installed?.map((f) => f.path).sort(), files.map((f) => f.path).sort())
    assert.strictEqual(decoded(installed?.find((f) => f.path === "SKILL.md")?.content), skillMd("attach-me"))
    const listed = (await request("GET", `/v0/agents/${agentId}/skills`, owner)).body!["skills"]
    assert.strictEqual(listed.length, 1)
    assert.strictEqual(listed[0].skillId, skill.skillId)
    assert.strictEqual(listed[0].updateAvailable, false)
    const engineList = await engine((e) => e.listSkills(agentId))
    assert.isTrue(engineList.some((s) => s.name === "attach-me" && s.source === "workspace"))

    expectError(await request("DELETE", `/v0/skills/${skill.skillId}`, owner), 409, /^Skill is attached to agents: helper/, { agents: [{ agentId, name: "helper" }] })
    const detached = await request("DELETE", `/v0/agents/${agentId}/skills/${skill.skillId}`, owner)
    assert.strictEqual(detached.status, 200)
    assert.isUndefined(await engine((e) => e.readSkill(agentId, "attach-me")))
    assert.deepStrictEqual((await request("GET", `/v0/agents/${agentId}/skills`, owner)).body!["skills"], [])
    assert.strictEqual((await request("DELETE", `/v0/skills/${skill.skillId}`, owner)).body!["wasInLibrary"], true)
  })

  it("takes the interface document's field name, skills, with library skills' ids or CIDs", async () => {
    const agentId = await newAgent(owner)
    const byId = (await register(owner, await store(folder("by-id")))).body!["skill"]
    const byCid = (await register(owner, await store(folder("by-cid")))).body!["skill"]
    assert.deepStrictEqual((await request("POST", `/v0/agents/${agentId}/skills`, owner, { skills: [byId.skillId, byCid.skillCid] })).body, { success: true, attached: 2 })
    const listed = (await request("GET", `/v0/agents/${agentId}/skills`, owner)).body!["skills"] as Array<{ skillId: string; skillCid: string }>
    assert.deepStrictEqual(listed.map((s) => [s.skillId, s.skillCid]).sort(), [[byId.skillId, byId.skillCid], [byCid.skillId, byCid.skillCid]].sort())
    assert.isDefined(await engine((e) => e.readSkill(agentId, "by-id")))
    expectError(await request("POST", `/v0/agents/${agentId}/skills`, owner, { skills: ["no-such-skill"] }), 404, "Skill not installed in the library")
    const neither = "Validation failed: give the skills to attach as skillCids (or skills): CIDs or ids of library skills"
    expectError(await request("POST", `/v0/agents/${agentId}/skills`, owner, {}), 400, neither)
    expectError(await request("POST", `/v0/agents/${agentId}/skills`, owner, { skills: [byId.skillId], skillCids: [byCid.skillCid] }), 400, neither)
  })

  it("refuses a CID not in the library (404) and an eleventh skill (400), attaching nothing", async () => {
    const agentId = await newAgent(owner)
    expectError(await request("POST", `/v0/agents/${agentId}/skills`, owner, { skillCids: ["bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku"] }), 404,
      "Skill not installed in the library")
    const cids = await Promise.all(Array.from({ length: 11 }, async (_, i) =>
      (await register(owner, await store(folder(`many-${i}`)))).body!["skill"].skillCid as string))
    expectError(await request("POST", `/v0/agents/${agentId}/skills`, owner, { skillCids: cids }), 400, "Validation failed: skills exceeds maximum of 10")
    assert.deepStrictEqual((await request("GET", `/v0/agents/${agentId}/skills`, owner)).body!["skills"], [])
    assert.deepStrictEqual((await request("POST", `/v0/agents/${agentId}/skills`, owner, { skillCids: cids.slice(0, 10) })).body, { success: true, attached: 10 })
    expectError(await request("POST", `/v0/agents/${agentId}/skills`, owner, { skillCids: cids.slice(10) }), 400, "Validation failed: skills exceeds maximum of 10")
    assert.strictEqual((await request("GET", `/v0/agents/${agentId}/skills`, owner)).body!["skills"].length, 10)
    expectError(await request("POST", `/v0/agents/${agentId}/skills`, owner, { skillCids: [] }), 400, /^Validation failed: /)
    expectError(await request("POST", `/v0/agents/nope/skills`, owner, { skillCids: cids.slice(0, 1) }), 404, "Agent not found")
  })

  it("offers a newer library version, refuses to overwrite files changed in the agent (409 naming them), and applies it when forced", async () => {
    const token = (await key(await workspace(5))).token
    const agentId = await newAgent(token)
    const v1 = (await register(token, await store(folder("updatable", "echo v1", "version: 1.0.0\n")))).body!["skill"]
    await request("POST", `/v0/agents/${agentId}/skills`, token, { skillCids: [v1.skillCid] })
    assert.deepStrictEqual((await request("GET", `/v0/agents/${agentId}/skills/updates`, token)).body, { updates: [] })
    const v2 = (await register(token, await store(folder("updatable", "echo v2", "version: 1.1.0\n")))).body!["skill"]
    const updates = (await request("GET", `/v0/agents/${agentId}/skills/updates`, token)).body!["updates"]
    assert.deepStrictEqual(updates, [{
      skillId: v1.skillId, name: "updatable", currentVersion: "1.0.0", currentCid: v1.skillCid, source: "cid", latestVersion: "1.1.0", latestCid: v2.skillCid
    }])

    await engine((e) => e.writeWorkspaceFiles(agentId, [{ path: "skills/updatable/scripts/run.sh", content: text("#!/bin/sh\necho edited\n") }]))
    const refused = await request("POST", `/v0/agents/${agentId}/skills/${v1.skillId}/update`, token, {})
    expectError(refused, 409, /^Skill version conflict: scripts\/run.sh changed/, { changedFiles: ["scripts/run.sh"] })
    assert.deepStrictEqual(refused.body!["changedFiles"], ["scripts/run.sh"])
    assert.strictEqual(decoded((await engine((e) => e.readSkill(agentId, "updatable")))?.find((f) => f.path === "scripts/run.sh")?.content), "#!/bin/sh\necho edited\n")

    const forced = await request("POST", `/v0/agents/${agentId}/skills/${v1.skillId}/update`, token, { force: true })
    assert.strictEqual(forced.status, 200, JSON.stringify(forced.body))
    assert.strictEqual(forced.body!["updated"], true)
    assert.strictEqual(forced.body!["skill"].skillCid, v2.skillCid)
    assert.strictEqual(decoded((await engine((e) => e.readSkill(agentId, "updatable")))?.find((f) => f.path === "scripts/run.sh")?.content), "#!/bin/sh\necho v2\n")
    assert.deepStrictEqual((await request("GET", `/v0/agents/${agentId}/skills/updates`, token)).body, { updates: [] })

    // Back to 1.0.0 by version; an unchanged workspace needs no force.
    const back = await request("POST", `/v0/agents/${agentId}/skills/${v1.skillId}/update`, token, { version: "1.0.0" })
    assert.strictEqual(back.body!["skill"].skillCid, v1.skillCid)
    expectError(await request("POST", `/v0/agents/${agentId}/skills/${v1.skillId}/update`, token, { version: "9.9.9" }), 400,
      "Validation failed: skill updatable has no version 9.9.9")
    const same = await request("POST", `/v0/agents/${agentId}/skills/${v1.skillId}/update`, token, { version: "1.0.0" })
    assert.strictEqual(same.body!["updated"], false)
  })

  it("lets go of an agent's skills when the agent is deleted, so they can leave the library", async () => {
    const token = (await key(await workspace(5))).token
    const agentId = await newAgent(token)
    const skill = (await register(token, await store(folder("outlives")))).body!["skill"]
    await request("POST", `/v0/agents/${agentId}/skills`, token, { skillCids: [skill.skillCid] })
    expectError(await request("DELETE", `/v0/skills/${skill.skillId}`, token), 409, /^Skill is attached to agents/, { agents: [{ agentId, name: "helper" }] })
    assert.strictEqual((await request("DELETE", `/v0/agents/${agentId}`, token)).status, 200)
    assert.strictEqual((await request("DELETE", `/v0/skills/${skill.skillId}`, token)).body!["wasInLibrary"], true)
  })

  it("puts attached skills back into a workspace that lost them when the gateway restarts", async () => {
    const token = (await key(await workspace(5))).token
    const agentId = await newAgent(token)
    const skill = (await register(token, await store(folder("restored")))).body!["skill"]
    await request("POST", `/v0/agents/${agentId}/skills`, token, { skillCids: [skill.skillCid] })
    await engine((e) => e.removeSkill(agentId, "restored"))
    assert.strictEqual((await request("POST", `/v0/agents/${agentId}/restart`, token, {})).status, 200)
    for (let i = 0; i < 200 && (await engine((e) => e.readSkill(agentId, "restored"))) === undefined; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
    assert.isDefined(await engine((e) => e.readSkill(agentId, "restored")))
  })
})
