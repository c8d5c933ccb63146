/**
 * The template catalog on a real server process: a fresh install lists the shipped templates, a restart publishes
 * nothing new, and the admin CLI publishes a folder as a public template, then its next version, and archives it
 * (publishing an unchanged folder again is covered over the admin API in packages/http).
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { cli, cliResult, newApiUser, type ServerProcess, startServer, waitUntil, waitUntilServing } from "../src/testing/index.ts"

const dataDir = mkdtempSync(join(tmpdir(), "cairn-templates-"))
// A fresh install on the embedded defaults: under CI's Postgres pass, other servers share DATABASE_URL's database
// and may have published the shipped templates already, which would make this no fresh install.
const env = { DATA_DIR: dataDir, ENGINE: "simulated", DATABASE_URL: undefined }
let server: ServerProcess

afterAll(async () => {
  if (server.child.exitCode === null) {
    server.child.kill("SIGTERM")
    await server.exited
  }
  rmSync(dataDir, { recursive: true, force: true })
})

const folder = (soul: string) => {
  const dir = mkdtempSync(join(tmpdir(), "cairn-template-folder-"))
  writeFileSync(join(dir, "manifest.json"), JSON.stringify({ version: 1, agent: { name: "Ops Helper", description: "Runs the ops checklist" }, category: "operations" }))
  writeFileSync(join(dir, "SOUL.md"), soul)
  mkdirSync(join(dir, ".git"))
  writeFileSync(join(dir, ".git", "HEAD"), "ref: refs/heads/main\n")
  return dir
}

describe("templates on the Node server", () => {
  it("lists the shipped templates on a fresh install, and a restart publishes nothing new", async () => {
    server = await startServer(env)
    await waitUntilServing(server)
    const ops = { get url() { return server.url }, dataDir }
    const { call } = newApiUser(ops, { workspace: "Templates", scopes: "org:agents" })
    const listed = await call("GET", "/v0/templates")
    assert.strictEqual(listed.status, 200)
    const shipped = listed.body.templates as Array<{ slug: string; featured: boolean; visibility: string; version: number }>
    assert.deepStrictEqual(shipped.map((t) => t.slug), ["code-reviewer", "daily-briefing", "research-assistant"])
    assert.isTrue(shipped.every((t) => t.featured && t.visibility === "public" && t.version === 1))
    assert.deepStrictEqual(listed.body.categories, ["engineering", "productivity", "research"])
    assert.include(server.output(), "Shipped templates: code-reviewer published, daily-briefing published, research-assistant published")

    server.child.kill("SIGTERM")
    assert.strictEqual(await server.exited, 0)
    server = await startServer(env)
    await waitUntilServing(server)
    assert.include(server.output(), "code-reviewer unchanged")
    const again = (await call("GET", "/v0/templates")).body.templates as Array<{ slug: string; version: number }>
    assert.deepStrictEqual(again.map((t) => [t.slug, t.version]), shipped.map((t) => [t.slug, 1]))
  }, 120_000)

  it("gives an agent made from a shipped template the tasks the template declares, once its gateway runs", async () => {
    const ops = { url: server.url, dataDir }
    const user = newApiUser(ops, { workspace: "Briefed", scopes: "org:agents", agentLimit: 1 })
    const template = (await user.call("GET", "/v0/templates/daily-briefing")).body.template
    const created = await user.call("POST", "/v0/agents", { templateId: template.templateId })
    assert.strictEqual(created.status, 201, JSON.stringify(created.body))
    const agentId = created.body.agent.agentId as string
    const names = await waitUntil("the template's tasks", async () => {
      const tasks = ((await user.call("GET", `/v0/agents/${agentId}/tasks`)).body?.tasks ?? []) as Array<{ name: string; system: boolean }>
      const mine = tasks.filter((t) => !t.system).map((t) => t.name)
      return mine.length === 2 ? mine : undefined
    }, { timeoutMs: 30_000, output: server.output })
    assert.sameMembers(names, ["morning-briefing", "weekly-review"])
    // The tasks list reads the engine, which has the tasks before the creation is recorded and logged.
    const line = `Agent ${agentId}: created 2 task(s) its template ${template.templateId} declares`
    await waitUntil("the creation logged", async () => server.output().includes(line) || undefined, { timeoutMs: 15_000, output: server.output })
  }, 60_000)

  it("publishes a folder as a public template with the admin CLI, then its next version, and archives it", async () => {
    const ops = { url: server.url, dataDir }
    const user = newApiUser(ops, { workspace: "Readers", scopes: "org:agents" })
    const dir = folder("Check the dashboards.")
    const templateId = cli(ops, "template", "publish", dir, "--slug", "ops-helper", "--featured")
    const published = await user.call("GET", "/v0/templates/ops-helper")
    assert.strictEqual(published.status, 200)
    assert.include(published.body.template, { templateId, visibility: "public", featured: true, version: 1, category: "operations", userId: "admin" })

    writeFileSync(join(dir, "SOUL.md"), "Check the dashboards, then the alerts.")
    const next = cliResult(ops, "template", "publish", dir, "--slug", "ops-helper", "--featured")
    assert.include(next.stdout, "Published version 2 of template ops-helper")
    assert.strictEqual((await user.call("GET", `/v0/templates/id/${templateId}`)).body.template.version, 2)

    assert.strictEqual(cliResult(ops, "template", "archive", templateId).status, 0)
    assert.strictEqual((await user.call("GET", "/v0/templates/ops-helper")).status, 404)
  }, 120_000)

  it("prints every problem of an invalid folder and publishes nothing", () => {
    const ops = { url: server.url, dataDir }
    const dir = folder("x")
    writeFileSync(join(dir, "manifest.json"), JSON.stringify({ version: 2, agent: { name: "" } }))
    symlinkSync("SOUL.md", join(dir, "link.md"))
    const refused = cliResult(ops, "template", "publish", dir)
    assert.strictEqual(refused.status, 1)
    assert.include(refused.stderr, "is not a valid template:")
    assert.include(refused.stderr, "link.md: symbolic links are not allowed")
    assert.include(refused.stderr, "/version: must be 1 (the only manifest version)")
    assert.include(refused.stderr, "/agent/name: must NOT have fewer than 1 characters")
    const missing = cliResult(ops, "template", "publish", join(dir, "nope"))
    assert.strictEqual(missing.status, 1)
    assert.include(missing.stderr, "cannot read")
  })
})
