/**
 * An agent made from a template through the real routes, on the simulated engine: the template's files are in the
 * workspace before the gateway starts, its skills are in the library and attached, and a required secret that is
 * not attached is refused. Runs on PGlite, and on a fresh Postgres database when DATABASE_URL is set.
 */
import { AgentEngine } from "@cairn/agent-engine"
import { TemplateTasks } from "@cairn/application"
import { ContentStore } from "@cairn/content-store"
import { TestRuntime } from "@cairn/runtime/testing"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect } from "effect"

const api = TestRuntime.makeTestApi()
const { request, workspace, key, runtime } = api
afterAll(api.dispose)

const text = (s: string) => new TextEncoder().encode(s)
const store = (files: ReadonlyArray<{ path: string; content: Uint8Array }>) =>
  runtime.runPromise(ContentStore.use((c) => c.addDirectory(files, { network: "public" })).pipe(Effect.map((a) => a.cid)))
const engine = <A>(f: (e: AgentEngine["Service"]) => Effect.Effect<A, unknown>) => runtime.runPromise(AgentEngine.use(f) as Effect.Effect<A>)

let owner: string
let templateId: string
const soul = "# Soul\n\nYou forecast the weather, briefly and kindly.\n"

beforeAll(async () => {
  owner = (await key(await workspace(10))).token
  const skillCid = await store([
    { path: "SKILL.md", content: text("---\nname: forecast\ndescription: Looks up the forecast\n---\n\nCall the API.\n") }
  ])
  const templateCid = await store([
    {
      path: "manifest.json",
      content: text(JSON.stringify({
        version: 1,
        agent: { name: "Weatherman", description: "Tells the weather", emoji: "⛅" },
        skills: [{ name: "forecast", cid: skillCid }],
        secrets: [{ name: "WEATHER_API_KEY", description: "From the weather service" }, { name: "OPTIONAL_KEY", required: false }],
        tasks: [{ name: "morning", prompt: "Say today's weather", schedule: "0 7 * * *" }]
      }))
    },
    { path: "SOUL.md", content: text(soul) },
    { path: "memory/notes.md", content: text("Nothing yet.\n") }
  ])
  const published = await request("POST", "/v0/templates", owner, { templateCid, slug: `weatherman-${Date.now()}` })
  assert.include([200, 201], published.status, JSON.stringify(published.body))
  templateId = published.body!["template"]["templateId"]
}, 120_000)

describe("an agent made from a template", () => {
  it("is refused while a secret the template requires is not attached: 400 naming it", async () => {
    const refused = await request("POST", "/v0/agents", owner, { templateId })
    assert.strictEqual(refused.status, 400)
    assert.strictEqual(refused.body!["error"], "Validation failed: missing required secret WEATHER_API_KEY")
    assert.deepStrictEqual((await request("GET", "/v0/agents", owner)).body!["agents"], [])
  })

  it("starts with the template's files in its workspace and its skills attached and installed", async () => {
    const secret = (await request("POST", "/v0/secrets", owner, { name: "WEATHER_API_KEY", value: "wx-123" })).body!["secret"]
    const created = await request("POST", "/v0/agents", owner, { templateId, secretIds: [secret.id] })
    assert.strictEqual(created.status, 201, JSON.stringify(created.body))
    const agentId = created.body!["agent"]["agentId"]
    assert.strictEqual(created.body!["agent"]["name"], "Weatherman")
    assert.strictEqual(new TextDecoder().decode(await engine((e) => e.readWorkspaceFile(agentId, "SOUL.md"))), soul)
    assert.strictEqual(new TextDecoder().decode(await engine((e) => e.readWorkspaceFile(agentId, "memory/notes.md"))), "Nothing yet.\n")
    assert.isUndefined(await engine((e) => e.readWorkspaceFile(agentId, "manifest.json")))
    const skills = (await request("GET", `/v0/agents/${agentId}/skills`, owner)).body!["skills"]
    assert.deepStrictEqual(skills.map((s: { name: string }) => s.name), ["forecast"])
    for (let i = 0; i < 200 && (await engine((e) => e.readSkill(agentId, "forecast"))) === undefined; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
    assert.isDefined(await engine((e) => e.readSkill(agentId, "forecast")))
    assert.isTrue((await request("GET", "/v0/skills", owner)).body!["skills"].some((s: { name: string }) => s.name === "forecast"))
  })

  it("keeps a given name, and a second agent reuses the library's copy of the skill", async () => {
    const secret = (await request("GET", "/v0/secrets", owner)).body!["secrets"].find((s: { name: string }) => s.name === "WEATHER_API_KEY")
    const created = await request("POST", "/v0/agents", owner, { name: "Second", templateId, secretIds: [secret.id] })
    assert.strictEqual(created.body!["agent"]["name"], "Second")
    assert.strictEqual((await request("GET", "/v0/skills", owner)).body!["skills"].filter((s: { name: string }) => s.name === "forecast").length, 1)
  })

  it("gets the tasks its template declares once it runs, once, recorded as created from the template", async () => {
    const secret = (await request("GET", "/v0/secrets", owner)).body!["secrets"].find((s: { name: string }) => s.name === "WEATHER_API_KEY")
    const created = await request("POST", "/v0/agents", owner, { name: "Tasked", templateId, secretIds: [secret.id] })
    const agentId = created.body!["agent"]["agentId"] as string
    for (let i = 0; i < 200 && (await request("GET", `/v0/agents/${agentId}`, owner)).body!["agent"].status !== "running"; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
    const round = () => runtime.runPromise(TemplateTasks.use((t) => t.round))
    await round()
    const userTasks = async () =>
      ((await request("GET", `/v0/agents/${agentId}/tasks`, owner)).body!["tasks"] as Array<Record<string, any>>).filter((t) => !t["system"])
    const listed = await userTasks()
    assert.deepStrictEqual(listed.map((t) => [t["name"], t["schedule"], t["payload"], t["sessionTarget"]]), [
      ["morning", { kind: "cron", expr: "0 7 * * *" }, { kind: "agentTurn", text: "Say today's weather" }, "isolated"]
    ])
    const history = (await request("GET", `/v0/agents/${agentId}/events`, owner)).body!["events"] as Array<{ type: string; actor: string; data: Record<string, any> }>
    const taskEvents = history.filter((e) => e.type === "TaskCreated" || e.type === "TemplateTasksCreated")
    assert.deepStrictEqual(taskEvents.map((e) => [e.type, e.actor]), [["TaskCreated", "ada"], ["TemplateTasksCreated", "ada"]])
    assert.strictEqual(taskEvents[0]!.data["fromTemplate"], templateId)
    assert.deepStrictEqual(taskEvents[1]!.data["taskIds"], [listed[0]!["id"]])
    // Once: later rounds create nothing, and a task the user deletes stays deleted.
    assert.strictEqual((await request("DELETE", `/v0/agents/${agentId}/tasks/${listed[0]!["id"]}`, owner)).status, 200)
    await round()
    assert.deepStrictEqual(await userTasks(), [])
  })

  it("names an unknown template: 404 Template not found", async () => {
    const refused = await request("POST", "/v0/agents", owner, { templateId: "no-such-template" })
    assert.strictEqual(refused.status, 404)
    assert.strictEqual(refused.body!["error"], "Template not found")
  })
})
