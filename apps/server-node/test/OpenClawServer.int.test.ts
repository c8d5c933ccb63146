/**
 * Agents on real OpenClaw gateways, through the HTTP API of a real server process on its default engine, the way a
 * new user meets them: create one and see its gateway answer on loopback, list its devices, kill its process and
 * watch the supervisor bring it back, restart it (and fail to with a bad version), give it a secret and see it in
 * the gateway's environment (and in no file), kill Cairn itself and see no orphan gateway, start Cairn again and see
 * the agent resumed with its secret, detach it, delete the agent and see its process gone. Skills and templates: a
 * skill uploaded to the library and attached is loaded by the running gateway (its own `skills.status`) and gone
 * when detached; an agent made from a shipped template runs with the template's files in its workspace. Workspace
 * operations: a console command in the agent's sandbox sees its secret and not Cairn's data directory, a file uploaded
 * is read back, the runtime config is written through the gateway (and refused stale or invalid), a scheduled task is
 * created, and both survive Cairn being killed and started again.
 * Slow (each gateway start takes about 10 s), so it runs only with ENGINE_IT=openclaw, as .ci/run sets. With
 * DATABASE_URL (CI's PostgreSQL pass) it runs only what keeps state in the store: the agent's record through a crash,
 * its sealed secret, its resumption after Cairn is killed, the detach and the delete; the rest runs on the embedded
 * store only (`embeddedStorePass`).
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import { gatewayAnswersReady, gatewayEnvironment, inGatewayNetwork, processesUnder, recordedGatewayPid, removeDataDir, reserveGatewayPorts } from "@cairn/agent-engine-openclaw/testing"
import { Archive } from "@cairn/skill-hub"
import { execFile } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { embeddedStorePass, filesUnder, newApiUser, type ServerProcess, startServer, textOf, waitUntil, waitUntilServing } from "../src/testing/index.ts"

const enabled = process.env["ENGINE_IT"] === "openclaw"
const dataDir = enabled ? mkdtempSync(join(tmpdir(), "cairn-openclaw-server-")) : ""
// Gateway ports no other test process on this machine holds.
const basePort = enabled ? reserveGatewayPorts() : 0
const env = {
  DATA_DIR: dataDir,
  ENGINE: undefined, // the default engine is OpenClaw
  OPENCLAW_VERSIONS: "2026.9.5,2026.9.6",
  OPENCLAW_BASE_PORT: String(basePort),
  // Configured, as it must be when the suite runs on a shared PostgreSQL (DATABASE_URL): no key is generated there.
  SECRETS_MASTER_KEY: btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32)))),
  ...(process.env["OPENCLAW_ENGINES_DIR"] === undefined ? {} : { OPENCLAW_ENGINES_DIR: process.env["OPENCLAW_ENGINES_DIR"] })
}
let server: ServerProcess | undefined


/** The pids of gateways (and their workers) running under this data dir, or in one agent's home. */
const gatewayProcesses = (agentId?: string) =>
  processesUnder(agentId === undefined ? join(dataDir, "agents") : join(dataDir, "agents", agentId)).map((p) => p.pid)

const waitFor = <A>(what: string, check: () => Promise<A | undefined> | A | undefined, timeoutMs = 180_000): Promise<A> =>
  waitUntil(what, check, { output: () => server?.output() ?? "", timeoutMs, intervalMs: 250 })

/** The skills an agent's running gateway has loaded, by its own RPC (`skills.status`, through the engine's CLI). */
const gatewaySkills = (home: string) =>
  new Promise<ReadonlyArray<string>>((resolve, reject) => {
    const enginesDir = process.env["OPENCLAW_ENGINES_DIR"] ?? join(dataDir, "engines")
    const cli = join(enginesDir, "2026.9.6", "node_modules", "openclaw", "openclaw.mjs")
    execFile(...inGatewayNetwork(home, process.execPath, [cli, "gateway", "call", "skills.status", "--json"]), { cwd: home, env: gatewayEnvironment(home), maxBuffer: 16 << 20 }, (error, stdout) => {
      if (error !== null) return reject(error)
      const status = JSON.parse(stdout.slice(Math.max(0, stdout.search(/^\{/m)))) as { skills: ReadonlyArray<{ name: string }> }
      resolve(status.skills.map((s) => s.name))
    })
  })

afterAll(async () => {
  if (!enabled) return
  if (server !== undefined && server.child.exitCode === null) {
    server.child.kill("SIGTERM")
    await server.exited
  }
  for (const pid of gatewayProcesses()) process.kill(pid, "SIGKILL")
  removeDataDir(dataDir)
})

describe.skipIf(!enabled)("agents on real OpenClaw gateways, through the HTTP API", () => {
  it("run, list devices, come back from a crash, restart, survive Cairn being killed, and leave nothing when deleted", async () => {
    server = await startServer(env)
    await waitUntilServing(server)
    // The server moves to another port when it restarts: calls follow it.
    const ops = { get url() { return server!.url }, dataDir }
    const { call, token } = newApiUser(ops, { workspace: "Real agents", agentLimit: 2, scopes: "org:agents" })
    const status = async (agentId: string) => (await call("GET", `/v0/agents/${agentId}`)).body.agent.status as string
    const untilRunning = (agentId: string) => waitFor(`agent ${agentId} runs`, async () => (await status(agentId)) === "running" || undefined)
    const gatewayPid = (agentId: string) => Number(recordedGatewayPid(join(dataDir, "agents", agentId)))
    const gatewayAnswers = async (agentId: string) => {
      const { gateway } = JSON.parse(readFileSync(join(dataDir, "agents", agentId, ".openclaw", "openclaw.json"), "utf8"))
      // Asked from the agent's own network, where the gateway listens (decision 0043).
      return gatewayAnswersReady(join(dataDir, "agents", agentId), gateway.port)
    }

    // Create: the answer comes at once, the gateway a few seconds later.
    const created = await call("POST", "/v0/agents", { name: "real" })
    assert.strictEqual(created.status, 201, JSON.stringify(created.body))
    const agentId = created.body.agent.agentId as string
    assert.strictEqual(created.body.agent.engineVersion, "2026.9.6")
    assert.strictEqual(created.body.agent.engine, "openclaw")
    await untilRunning(agentId)
    assert.isTrue(await gatewayAnswers(agentId))
    assert.deepStrictEqual((await call("GET", `/v0/agents/${agentId}/devices`)).body, { pending: [], paired: [] })
    // The gateway's own answer to a request it does not know ("unknown requestId", "unknown deviceId") is a 404.
    for (const [method, path] of [["POST", "devices/no-such-request/approve"], ["POST", "devices/no-such-request/reject"], ["DELETE", "devices/no-such-device"]] as const) {
      const answer = await call(method, `/v0/agents/${agentId}/${path}`)
      assert.deepStrictEqual([answer.status, answer.body], [404, { error: "Device not found" }], path)
    }
    assert.deepStrictEqual((await call("POST", `/v0/agents/${agentId}/devices/approve-all`)).body, { success: true, approved: [] })

    // The gateway dies: the supervisor records it and starts it again.
    const crashed = gatewayPid(agentId)
    process.kill(-crashed, "SIGKILL")
    await waitFor("the crash is recorded", async () => (await status(agentId)) !== "running" || undefined, 30_000)
    await untilRunning(agentId)
    assert.notStrictEqual(gatewayPid(agentId), crashed)
    assert.isTrue(await gatewayAnswers(agentId))
    const history = (await call("GET", `/v0/agents/${agentId}/events`)).body.events as Array<{ type: string; actor: string; data: any }>
    const stopped = history.findLastIndex((e) => e.type === "AgentStopped")
    assert.deepInclude(history[stopped]!, { actor: "supervisor" })
    assert.strictEqual(history[stopped]!.data.reason, "crashed")
    // Automatic snapshots (every SNAPSHOT_INTERVAL while the workspace changes) may come after it on the same trail.
    assert.strictEqual(history.filter((e) => !e.type.startsWith("Snapshot")).at(-1)!.type, "AgentStarted")

    // A secret: sealed at rest, in the gateway's environment from its next start, in no file of the agent's home.
    const value = `sk-ant-api03-${crypto.randomUUID()}`
    const secret = (await call("POST", "/v0/secrets", { name: "ANTHROPIC_API_KEY", value })).body.secret.id as string
    assert.deepStrictEqual((await call("POST", `/v0/agents/${agentId}/secrets`, { secretIds: [secret] })).body, { success: true, attached: 1 })
    assert.strictEqual(gatewayEnvironment(join(dataDir, "agents", agentId))?.["ANTHROPIC_API_KEY"], undefined)
    assert.strictEqual((await call("POST", `/v0/agents/${agentId}/restart`, {})).status, 200)
    assert.strictEqual(gatewayEnvironment(join(dataDir, "agents", agentId))?.["ANTHROPIC_API_KEY"], value)
    assert.deepStrictEqual((await call("GET", `/v0/agents/${agentId}`)).body.secrets.map((s: { synced: boolean }) => s.synced), [true])
    for (const file of filesUnder(join(dataDir, "agents", agentId))) assert.notInclude(textOf(file), value, file)

    // What the engine does behind the API does not depend on the store, and the PostgreSQL pass has the HTTP suites
    // for the store's side of restarts, the console's trail, files, config, tasks, skills, templates and snapshots:
    // that pass runs only the parts above and below, which keep the agent's record, its sealed secret and its
    // resumption across a kill in the store (embeddedStorePass).
    let taskId: string | undefined
    if (embeddedStorePass) {
      // Restarts: on its own version, then to an unknown and to an older version (OpenClaw migrates state one way).
      const beforeRestart = gatewayPid(agentId)
      const restarted = await call("POST", `/v0/agents/${agentId}/restart`, {})
      assert.strictEqual(restarted.status, 200, JSON.stringify(restarted.body))
      assert.strictEqual(restarted.body.agent.status, "running")
      assert.notStrictEqual(gatewayPid(agentId), beforeRestart)
      for (const version of ["1999.1.1", "2026.9.5"]) {
        const refused = await call("POST", `/v0/agents/${agentId}/restart`, { version })
        assert.strictEqual(refused.status, 400, JSON.stringify(refused.body))
        assert.strictEqual(refused.body.error, "Invalid version")
      }
      assert.strictEqual(await status(agentId), "running")

      // The console: a shell in the agent's sandbox, with its secrets, its workspace and nothing of Cairn's.
      const exec = async (command: string) => (await call("POST", `/v0/agents/${agentId}/console/exec`, { command })).body
      assert.deepInclude(await exec("printenv ANTHROPIC_API_KEY; pwd"), {
        stdout: `${value}\n${join(dataDir, "agents", agentId, ".openclaw", "workspace")}\n`,
        exitCode: 0,
        timedOut: false
      })
      assert.isTrue(existsSync(join(dataDir, "signing-key.json")))
      assert.notStrictEqual((await exec(`cat ${join(dataDir, "signing-key.json")}`)).exitCode, 0, "Cairn's signing key is readable in the sandbox")
      assert.strictEqual((await exec(`ls -a ${dataDir}`)).stdout, ".\n..\nagents\n", "Cairn's data directory is visible in the sandbox")
      // Its home is a filesystem of its own, of AGENT_DISK_MAX (10 GiB by default), where Cairn can mount one (root).
      if (process.getuid?.() === 0) {
        assert.strictEqual((await call("GET", `/v0/agents/${agentId}`)).body.limits.diskBytes, 10 * 1024 ** 3)
        const size = Number((await exec("df -B1 --output=size \"$HOME\" | tail -1")).stdout.trim())
        assert.isAbove(size, 9 * 1024 ** 3)
        assert.isAtMost(size, 10 * 1024 ** 3)
      }
      // Its gateway's log: OpenClaw's own lines, parsed, with no secret value in them, even one the agent wrote there.
      await exec(`echo "leaked $ANTHROPIC_API_KEY" >> ${join(dataDir, "agents", agentId, ".openclaw", "logs", "openclaw.log")}`)
      const logs = (await call("GET", `/v0/agents/${agentId}/logs?lines=200`)).body
      assert.isTrue(logs.entries.some((entry: { level: string | null; timestamp: string | null }) => entry.level !== null && entry.timestamp !== null), JSON.stringify(logs.entries.slice(0, 3)))
      assert.include(logs.logs, "leaked [redacted]")
      assert.notInclude(JSON.stringify(logs), value)
      const trail = JSON.stringify((await call("GET", `/v0/agents/${agentId}/events`)).body)
      assert.include(trail, "ConsoleCommandRan")
      assert.notInclude(trail, value, "a command's output reached the audit trail")

      // Files: uploaded into the workspace, read back over HTTP and from the console.
      const uploadedFile = await call("POST", `/v0/agents/${agentId}/files/upload`, { filename: "notes.txt", contentBase64: btoa("uploaded notes\n") })
      assert.deepStrictEqual(uploadedFile.body, { path: "uploads/notes.txt", filename: "notes.txt", size: 15 })
      assert.strictEqual(await (await fetch(`${server.url}/v0/agents/${agentId}/files?path=uploads/notes.txt`, { headers: { authorization: `Bearer ${token}` } })).text(), "uploaded notes\n")
      assert.strictEqual((await exec("cat uploads/notes.txt")).stdout, "uploaded notes\n")

      // Runtime config, through the gateway's RPC: read, written with its hash, refused when stale or invalid.
      const read = (await call("GET", `/v0/agents/${agentId}/config`)).body as { config: Record<string, any>; hash: string }
      assert.strictEqual(read.config["gateway"].port, basePort)
      const written = await call("PUT", `/v0/agents/${agentId}/config`, { config: { ...read.config, messages: { ackReaction: "eyes" } }, baseHash: read.hash })
      assert.strictEqual(written.status, 200, JSON.stringify(written.body))
      assert.strictEqual((await call("GET", `/v0/agents/${agentId}/config`)).body.config.messages.ackReaction, "eyes")
      assert.strictEqual((await call("PUT", `/v0/agents/${agentId}/config`, { config: read.config, baseHash: read.hash })).status, 409)
      const invalid = await call("PUT", `/v0/agents/${agentId}/config`, { config: { ...read.config, bogusKey: 1 } })
      assert.strictEqual(invalid.status, 400, JSON.stringify(invalid.body))
      assert.deepInclude(invalid.body.issues, { path: "<root>", message: "Unrecognized key: \"bogusKey\"" })
      const validated = await call("POST", `/v0/agents/${agentId}/config/validate`, { config: JSON.stringify({ gateway: { port: "nope" } }) })
      assert.strictEqual(validated.body.valid, false, JSON.stringify(validated.body))

      // A scheduled task, kept by the engine itself (checked again after Cairn restarts below).
      const task = await call("POST", `/v0/agents/${agentId}/tasks`, {
        name: "morning-note",
        schedule: { kind: "cron", expr: "0 9 * * *", tz: "UTC" },
        sessionTarget: "main",
        payload: { kind: "systemEvent", message: "Good morning" }
      })
      assert.strictEqual(task.status, 201, JSON.stringify(task.body))
      taskId = task.body.task.id as string
      const listed = (await call("GET", `/v0/agents/${agentId}/tasks`)).body.tasks as Array<{ id: string; system: boolean }>
      assert.isTrue(listed.some((t) => t.id === taskId && !t.system))
      const systemTask = listed.find((t) => t.system)!
      assert.strictEqual((await call("DELETE", `/v0/agents/${agentId}/tasks/${systemTask.id}`)).status, 403)

      // A skill: uploaded to the library, attached, loaded by the running gateway; detached, gone from it.
      const home = join(dataDir, "agents", agentId)
      const uploaded = await fetch(`${server.url}/v0/skills`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/zip" },
        body: Archive.writeZip([{ path: "SKILL.md", content: new TextEncoder().encode("---\nname: cairn-probe\ndescription: Proves skills reach the gateway\n---\n\nSay hi.\n") }])
      })
      const skill = ((await uploaded.json()) as { skill: { skillId: string; skillCid: string } }).skill
      assert.strictEqual(uploaded.status, 201)
      assert.deepStrictEqual((await call("POST", `/v0/agents/${agentId}/skills`, { skillCids: [skill.skillCid] })).body, { success: true, attached: 1 })
      assert.isTrue(existsSync(join(home, ".openclaw", "workspace", "skills", "cairn-probe", "SKILL.md")))
      await waitFor("the gateway loads the skill", async () => (await gatewaySkills(home)).includes("cairn-probe") || undefined, 60_000)
      assert.strictEqual((await call("DELETE", `/v0/agents/${agentId}/skills/${skill.skillId}`)).status, 200)
      await waitFor("the gateway drops the skill", async () => !(await gatewaySkills(home)).includes("cairn-probe") || undefined, 60_000)

      // A shipped template: the agent runs with its files in the workspace.
      const templates = (await call("GET", "/v0/templates")).body.templates as Array<{ templateId: string; slug: string }>
      const research = templates.find((t) => t.slug === "research-assistant")!
      const fromTemplate = await call("POST", "/v0/agents", { templateId: research.templateId })
      assert.strictEqual(fromTemplate.status, 201, JSON.stringify(fromTemplate.body))
      const templated = fromTemplate.body.agent.agentId as string
      await untilRunning(templated)
      assert.isTrue(await gatewayAnswers(templated))
      const shipped = join(import.meta.dirname, "..", "..", "..", "packages", "templates", "catalog", "research-assistant", "SOUL.md")
      assert.strictEqual(readFileSync(join(dataDir, "agents", templated, ".openclaw", "workspace", "SOUL.md"), "utf8"), readFileSync(shipped, "utf8"))
      assert.strictEqual((await call("DELETE", `/v0/agents/${templated}`)).status, 200)
      assert.deepStrictEqual(gatewayProcesses(templated), [])

      // Snapshots: the workspace stored as one UnixFS tree; files changed, deleted and added, then reset back exactly
      // (modes and symlinks too) with the gateway running again afterwards.
      const snapshotView = "find snap -printf '%p %y %m %l\\n' | LC_ALL=C sort; cat snap/a.txt snap/sub/b.txt"
      assert.strictEqual((await exec("mkdir -p snap/sub && printf one > snap/a.txt && printf two > snap/sub/b.txt && chmod 755 snap/a.txt && ln -s a.txt snap/link")).exitCode, 0)
      const atSnapshot = (await exec(snapshotView)).stdout
      assert.include(atSnapshot, "snap/a.txt f 755")
      assert.include(atSnapshot, "snap/link l 777 a.txt")
      const taken = await call("POST", `/v0/agents/${agentId}/snapshots/sync`)
      assert.strictEqual(taken.status, 200, JSON.stringify(taken.body))
      assert.strictEqual((await exec("printf changed > snap/a.txt && rm snap/sub/b.txt && printf new > snap/c.txt")).exitCode, 0)
      const next = await call("POST", `/v0/agents/${agentId}/snapshots/sync`)
      // At least: the running gateway writes files of its own in the workspace meanwhile.
      for (const counted of ["added", "modified", "deleted"]) assert.isAtLeast(next.body.changeSummary[counted], 1, counted)
      const resetTo = await call("POST", `/v0/agents/${agentId}/snapshots/reset`, { snapshotCid: taken.body.snapshotCid })
      assert.strictEqual(resetTo.status, 200, JSON.stringify(resetTo.body))
      await untilRunning(agentId)
      assert.isTrue(await gatewayAnswers(agentId))
      assert.strictEqual((await exec(snapshotView)).stdout, atSnapshot)
    }

    // Cairn is killed outright: its gateways stop themselves...
    const beforeKill = gatewayProcesses(agentId)
    assert.isAbove(beforeKill.length, 0)
    server.child.kill("SIGKILL")
    await server.exited
    await waitFor("no gateway outlives Cairn", () => gatewayProcesses().length === 0 || undefined, 60_000)

    // ...and the next Cairn starts the agent again.
    server = await startServer(env)
    await waitUntilServing(server)
    await untilRunning(agentId)
    assert.isTrue(await gatewayAnswers(agentId))
    assert.strictEqual(gatewayEnvironment(join(dataDir, "agents", agentId))?.["ANTHROPIC_API_KEY"], value, "resumed with its secret")
    if (embeddedStorePass) {
      assert.isTrue(((await call("GET", `/v0/agents/${agentId}/tasks`)).body.tasks as Array<{ id: string }>).some((t) => t.id === taskId), "the task survived")
      assert.strictEqual((await call("GET", `/v0/agents/${agentId}/config`)).body.config.messages.ackReaction, "eyes", "the config survived")
    }

    // Detached and restarted: gone.
    assert.strictEqual((await call("DELETE", `/v0/agents/${agentId}/secrets/${secret}`)).status, 200)
    assert.strictEqual((await call("POST", `/v0/agents/${agentId}/restart`, {})).status, 200)
    assert.strictEqual(gatewayEnvironment(join(dataDir, "agents", agentId))?.["ANTHROPIC_API_KEY"], undefined)

    // Delete: the process and the agent's home are gone.
    const deleted = await call("DELETE", `/v0/agents/${agentId}`)
    assert.strictEqual(deleted.status, 200, JSON.stringify(deleted.body))
    assert.deepStrictEqual(gatewayProcesses(agentId), [])
    assert.isFalse(existsSync(join(dataDir, "agents", agentId)))
    assert.strictEqual((await call("GET", `/v0/agents/${agentId}`)).status, 404)

    server.child.kill("SIGTERM")
    assert.strictEqual(await server.exited, 0)
    assert.deepStrictEqual(gatewayProcesses(), [])
  }, 600_000)
})
