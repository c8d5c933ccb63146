/**
 * Signed skills through the real routes: a skill folder uploaded with `/v3` (as the pinata SDK does), signed there by
 * a wallet (EIP-712 over its CID, the `/v3` signatures machinery), and registered in the library; with
 * SKILLS_TRUSTED_SIGNERS set, only versions a trusted wallet signed are attached, and the library, the agent and
 * the templates show who signed each.
 */
import { ApiKit, TestRuntime } from "@cairn/runtime/testing"
import { domain, primaryType, types } from "@cairn/signatures"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"

const trusted = privateKeyToAccount(generatePrivateKey())
const stranger = privateKeyToAccount(generatePrivateKey())
const api = TestRuntime.makeTestApi({ trustedSkillSigners: [trusted.address.toLowerCase()] })
const { request, web } = api
afterAll(api.dispose)
const { expectError } = ApiKit
const { newAgent } = ApiKit.make(request)

let owner: string
let agentId: string

/** Uploads a skill folder with `/v3` as a public folder: its CID and upload date. */
const uploadSkill = async (name: string) => {
  const form = new FormData()
  form.append("file", new Blob([`---\nname: ${name}\ndescription: The ${name} skill\n---\n\nDo ${name}.\n`]), `${name}/SKILL.md`)
  form.append("file", new Blob(["echo hi\n"]), `${name}/run.sh`)
  form.append("network", "public")
  const uploaded = await web.handler(new Request("http://cairn/v3/files", { method: "POST", headers: { authorization: `Bearer ${owner}` }, body: form }))
  const file = (await uploaded.json() as { data: { cid: string; created_at: string; mime_type: string } }).data
  assert.strictEqual(file.mime_type, "directory")
  return file
}
const sign = async (account: typeof trusted, file: { cid: string; created_at: string }) => {
  const signature = await account.signTypedData({ domain, types, primaryType, message: { address: account.address, cid: file.cid, date: file.created_at } })
  const added = await request("POST", `/v3/files/public/signature/${file.cid}`, owner, { signature, address: account.address })
  assert.strictEqual(added.status, 200, JSON.stringify(added.body))
}
const register = async (cid: string) => {
  const added = await request("POST", "/v0/skills", owner, { skillCid: cid })
  assert.strictEqual(added.status, 201, JSON.stringify(added.body))
  return added.body!["skill"] as { skillId: string; skillCid: string; signedBy: string | null }
}
const attach = (cid: string) => request("POST", `/v0/agents/${agentId}/skills`, owner, { skillCids: [cid] })
const held = async () => (await request("GET", `/v0/agents/${agentId}`, owner)).body!["skills"] as Array<{ name: string; signedBy: string | null }>

beforeAll(async () => {
  owner = (await api.key(await api.workspace(5), ["org:agents", "org:files:read", "org:files:write"])).token
  agentId = await newAgent(owner, "signed-skills")
}, 120_000)

describe("with trusted signers", () => {
  it("attaches a version a trusted wallet signed, and shows who signed it", async () => {
    const file = await uploadSkill("weather")
    await sign(trusted, file)
    const skill = await register(file.cid)
    assert.strictEqual(skill.signedBy, trusted.address)
    const library = (await request("GET", "/v0/skills", owner)).body!["skills"] as Array<{ name: string; signedBy: string | null }>
    assert.deepStrictEqual(library.map((s) => [s.name, s.signedBy]), [["weather", trusted.address]])
    const attached = await attach(file.cid)
    assert.strictEqual(attached.status, 200, JSON.stringify(attached.body))
    assert.deepStrictEqual((await held()).map((s) => [s.name, s.signedBy]), [["weather", trusted.address]])
  })

  it("refuses an unsigned version, and one another wallet signed, naming the signer", async () => {
    const unsigned = await uploadSkill("unsigned")
    assert.isNull((await register(unsigned.cid)).signedBy)
    expectError(await attach(unsigned.cid), 403, "Skill is not signed by a trusted signer", { skill: "unsigned", skillCid: unsigned.cid, signedBy: null })

    const other = await uploadSkill("other")
    await sign(stranger, other)
    assert.strictEqual((await register(other.cid)).signedBy, stranger.address)
    expectError(await attach(other.cid), 403, "Skill is not signed by a trusted signer", { skill: "other", skillCid: other.cid, signedBy: stranger.address })
    // Nothing of either was attached.
    assert.deepStrictEqual((await held()).map((s) => s.name), ["weather"])
  })

  it("refuses an agent whose template names an unsigned skill, before anything is created", async () => {
    const unsigned = await uploadSkill("templated")
    const manifest = JSON.stringify({ version: 1, agent: { name: "Templated" }, skills: [{ name: "templated", cid: unsigned.cid }] })
    const form = new FormData()
    form.append("file", new Blob([manifest]), "tpl/manifest.json")
    form.append("network", "public")
    const uploaded = await web.handler(new Request("http://cairn/v3/files", { method: "POST", headers: { authorization: `Bearer ${owner}` }, body: form }))
    const { cid: templateCid, created_at: createdAt } = (await uploaded.json() as { data: { cid: string; created_at: string } }).data
    const published = await request("POST", "/v0/templates", owner, { templateCid, slug: `templated-${Date.now()}` })
    assert.strictEqual(published.status, 201, JSON.stringify(published.body))
    const before = ((await request("GET", "/v0/agents", owner)).body!["agents"] as Array<unknown>).length
    const refused = await request("POST", "/v0/agents", owner, { templateId: published.body!["template"].templateId })
    assert.strictEqual(refused.status, 403, JSON.stringify(refused.body))
    assert.strictEqual(refused.body!["error"], "Skill is not signed by a trusted signer")
    assert.strictEqual(((await request("GET", "/v0/agents", owner)).body!["agents"] as Array<unknown>).length, before)
    // The template itself is unsigned; once its folder is signed, its listing says by whom.
    assert.isNull(published.body!["template"].signedBy)
    await sign(trusted, { cid: templateCid, created_at: createdAt })
    const shown = await request("GET", `/v0/templates/id/${published.body!["template"].templateId}`, owner)
    assert.strictEqual(shown.body!["template"].signedBy, trusted.address)
  })
})
