/**
 * The skill hub through the real routes: a real ClawHub-protocol registry on loopback (the one OpenClaw's own
 * installer also accepts) serving two versions of a skill, browsed, installed into the library, attached, and
 * updated when the hub publishes a newer version; an unreachable registry and a bad bundle. Runs on PGlite, and
 * on a fresh Postgres database when DATABASE_URL is set.
 */
import { AgentEngine } from "@cairn/agent-engine"
import { Archive, ClawHubRegistry } from "@cairn/skill-hub"
import { RegistryServer, writeCatalog } from "@cairn/skill-hub/testing"
import { ApiKit, TestRuntime } from "@cairn/runtime/testing"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect, Exit, Scope } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"

const skillMd = (version: string) => `---\nname: hello-hub\ndescription: Says hello, version ${version}\n---\n\n# Hello\n`
const version = (v: string) => ({ files: { "SKILL.md": skillMd(v), "scripts/hello.sh": `#!/bin/sh\necho hello ${v}\n` } })
const catalogDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "cairn-hub-test-"))
await Effect.runPromise(writeCatalog(catalogDir, {
  "hello-hub": { versions: { "1.0.0": version("1.0.0"), "1.1.0": version("1.1.0") }, hub: { category: "greetings", tags: ["demo"], installs: 7 } },
  "evil": { versions: { "1.0.0": { files: { "SKILL.md": "---\nname: evil\ndescription: Escapes\n---\n" } } } }
}))

const scope = Effect.runSync(Scope.make())
const registry = await Effect.runPromise(RegistryServer.serve({
  dir: catalogDir,
  archive: (slug) =>
    slug === "evil"
      ? Archive.writeZip([{ path: "SKILL.md", content: new TextEncoder().encode("---\nname: evil\ndescription: x\n---\n") }, { path: "../../escape.sh", content: new Uint8Array(1) }])
      : undefined
}).pipe(Scope.provide(scope)))

const api = TestRuntime.makeTestApi({ skillHub: ClawHubRegistry.layer({ url: registry.url }) })
const { request, workspace, key, runtime } = api
afterAll(async () => {
  await api.dispose()
  await Effect.runPromise(Scope.close(scope, Exit.void))
})

const { expectError } = ApiKit
const script = (agentId: string) =>
  runtime.runPromise(AgentEngine.use((e) => e.readSkill(agentId, "hello-hub"))).then((files) =>
    new TextDecoder().decode(files?.find((f) => f.path === "scripts/hello.sh")?.content))

let owner: string
beforeAll(async () => {
  owner = (await key(await workspace(5))).token
}, 120_000)

describe("the skill hub", () => {
  it("lists and looks up the registry's skills, newest version first", async () => {
    const listed = await request("GET", "/v0/clawhub?q=hello&sort=name", owner)
    assert.strictEqual(listed.status, 200, JSON.stringify(listed.body))
    const hello = listed.body!["skills"].find((s: { slug: string }) => s.slug === "hello-hub")
    assert.strictEqual(hello.version, "1.1.0")
    assert.strictEqual(hello.hubSkillId, "hello-hub")
    assert.strictEqual(hello.installed, false)
    assert.isTrue("nextCursor" in listed.body!)
    const one = await request("GET", "/v0/clawhub/hello-hub", owner)
    assert.strictEqual(one.body!["skill"].slug, "hello-hub")
    assert.strictEqual(one.body!["skill"].description, "Says hello, version 1.1.0")
    expectError(await request("GET", "/v0/clawhub/no-such-skill", owner), 404, "Skill no-such-skill not found on the hub")
    expectError(await request("GET", "/v0/clawhub?sort=sideways", owner), 400, /^Validation failed: /)
  })

  it("installs the newest version into the library once: 201, then 409; an unknown slug is 404", async () => {
    const installed = await request("POST", "/v0/clawhub/hello-hub/install", owner)
    assert.strictEqual(installed.status, 201, JSON.stringify(installed.body))
    assert.strictEqual(installed.body!["success"], true)
    const skill = installed.body!["skill"]
    assert.include(skill, { name: "hello-hub", source: "clawhub", slug: "hello-hub", version: "1.1.0" })
    assert.match(skill.skillCid, /^baf/)
    expectError(await request("POST", "/v0/clawhub/hello-hub/install", owner), 409, "Skill hello-hub is already in the library")
    expectError(await request("POST", "/v0/clawhub/no-such-skill/install", owner), 404, "Skill no-such-skill not found on the hub")
    assert.strictEqual((await request("GET", "/v0/clawhub/hello-hub", owner)).body!["skill"].installed, true)
  })

  it("refuses a bundle whose paths escape its folder: 400, and nothing is kept", async () => {
    const before = (await request("GET", "/v0/skills", owner)).body!["skills"].length
    expectError(await request("POST", "/v0/clawhub/evil/install", owner), 400, /^Validation failed: /)
    assert.strictEqual((await request("GET", "/v0/skills", owner)).body!["skills"].length, before)
  })

  it("offers the hub's newer version to an agent holding the skill, and moves it there or to a pinned one", async () => {
    const token = (await key(await workspace(5))).token
    const skill = (await request("POST", "/v0/clawhub/hello-hub/install", token)).body!["skill"]
    const agentId = (await request("POST", "/v0/agents", token, { name: "greeter" })).body!["agent"]["agentId"]
    assert.deepStrictEqual((await request("POST", `/v0/agents/${agentId}/skills`, token, { skillCids: [skill.skillCid] })).body, { success: true, attached: 1 })
    assert.strictEqual(await script(agentId), "#!/bin/sh\necho hello 1.1.0\n")
    assert.deepStrictEqual((await request("GET", `/v0/agents/${agentId}/skills/updates`, token)).body, { updates: [] })

    await Effect.runPromise(writeCatalog(catalogDir, { "hello-hub": { versions: { "1.2.0": version("1.2.0") } } }))
    const updates = (await request("GET", `/v0/agents/${agentId}/skills/updates`, token)).body!["updates"]
    assert.deepStrictEqual(updates, [{
      skillId: skill.skillId, name: "hello-hub", currentVersion: "1.1.0", currentCid: skill.skillCid, source: "clawhub", latestVersion: "1.2.0", latestCid: null
    }])
    const updated = await request("POST", `/v0/agents/${agentId}/skills/${skill.skillId}/update`, token, {})
    assert.strictEqual(updated.status, 200, JSON.stringify(updated.body))
    assert.strictEqual(updated.body!["skill"].version, "1.2.0")
    assert.strictEqual(await script(agentId), "#!/bin/sh\necho hello 1.2.0\n")
    const library = (await request("GET", "/v0/skills", token)).body!["skills"]
    assert.strictEqual(library.length, 1)
    assert.strictEqual(library[0].version, "1.2.0")

    const pinned = await request("POST", `/v0/agents/${agentId}/skills/${skill.skillId}/update`, token, { version: "1.0.0" })
    assert.strictEqual(pinned.body!["skill"].version, "1.0.0", JSON.stringify(pinned.body))
    assert.strictEqual(await script(agentId), "#!/bin/sh\necho hello 1.0.0\n")
    expectError(await request("POST", `/v0/agents/${agentId}/skills/${skill.skillId}/update`, token, { version: "7.0.0" }), 404,
      "Skill hello-hub has no version 7.0.0 on the hub")
  })
})

describe("an unreachable registry", () => {
  const down = TestRuntime.makeTestApi({ skillHub: ClawHubRegistry.layer({ url: "http://127.0.0.1:9", timeout: "2 seconds" }) })
  afterAll(down.dispose)

  it("answers 503 with a clear error on browse and install", async () => {
    const token = (await down.key(await down.workspace(1))).token
    expectError(await down.request("GET", "/v0/clawhub", token), 503, "Skill hub unavailable: http://127.0.0.1:9 could not be reached")
    expectError(await down.request("POST", "/v0/clawhub/hello-hub/install", token), 503, "Skill hub unavailable: http://127.0.0.1:9 could not be reached")
    assert.deepStrictEqual((await down.request("GET", "/v0/skills", token)).body!["skills"], [])
  })
})
