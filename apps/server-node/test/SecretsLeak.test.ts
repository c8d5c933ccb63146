/**
 * A secret's value never leaves the request that carried it, except into the gateway's environment: a full
 * scenario on a real server (create, duplicate, update, attach, restart, conflict, detach, delete, an online
 * master-key rotation after which values still open, error paths, debug logging and the access log on), then the value, its base64 and its hex are looked
 * for in every response body, the server's whole log, every row of every table (events and read models), and every
 * byte of the data directory. Zero hits.
 */
import { PgDatabase } from "@cairn/event-store-pg"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { cli, filesUnder, newApiUser, type ServerProcess, startServer, textOf, waitUntilServing } from "../src/testing/index.ts"

const dataDir = mkdtempSync(join(tmpdir(), "cairn-leak-"))
const canary = `sk-ant-api03-CANARY${crypto.randomUUID().replace(/-/g, "")}`
const changed = `${canary}-CHANGED`
const forms = (value: string) => [
  value,
  btoa(value),
  btoa(value).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, ""),
  Buffer.from(value).toString("hex"),
  Buffer.from(value).toString("hex").toUpperCase()
]
const needles = [...forms(canary), ...forms(changed)]
const hits = (haystack: string) => needles.filter((needle) => haystack.includes(needle))

let server: ServerProcess
const bodies: Array<string> = []

beforeAll(async () => {
  // Embedded on purpose (the data directory is what is searched), with every log line Cairn can write.
  server = await startServer({ DATA_DIR: dataDir, DATABASE_URL: undefined, ENGINE: "simulated", SIMULATED_START_DELAY: "50 millis", LOG_LEVEL: "Debug", ACCESS_LOG: "true" })
  await waitUntilServing(server)
}, 120_000)

afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

describe("a secret's value", () => {
  it("is found nowhere but in the gateway: not in responses, logs, tables or the data directory", async () => {
    const ops = { url: server.url, dataDir }
    const user = newApiUser(ops, { workspace: "Leaky", agentLimit: 5, scopes: "org:agents" })
    const call = async (method: string, path: string, body?: unknown) => {
      const response = await user.call(method, path, body)
      bodies.push(JSON.stringify(response.body ?? null))
      return response
    }
    const created = await call("POST", "/v0/secrets", { name: "ANTHROPIC_API_KEY", value: canary })
    assert.strictEqual(created.status, 201)
    const id = created.body.secret.id as string
    assert.strictEqual((await call("POST", "/v0/secrets", { name: "ANTHROPIC_API_KEY", value: canary })).status, 409)
    assert.strictEqual((await call("POST", "/v0/secrets", { name: "BAD NAME", value: canary })).status, 400)
    assert.strictEqual((await call("POST", "/v0/secrets", { name: "TOO_BIG", value: canary.repeat(2000) })).status, 400)
    const oauth = (await call("POST", "/v0/secrets", { name: "ANTHROPIC_OAUTH_TOKEN", value: changed })).body.secret.id as string
    const agent = (await call("POST", "/v0/agents", { name: "canary-keeper", secretIds: [id] })).body.agent.agentId as string
    for (let i = 0; i < 100 && (await call("GET", `/v0/agents/${agent}`)).body.agent.status !== "running"; i++) await new Promise((r) => setTimeout(r, 50))
    assert.strictEqual((await call("POST", `/v0/agents/${agent}/secrets`, { secretIds: [oauth] })).status, 409)
    assert.strictEqual((await call("PUT", `/v0/secrets/${id}`, { value: changed })).status, 200)
    assert.strictEqual((await call("POST", `/v0/agents/${agent}/restart`, {})).status, 200)
    await call("GET", "/v0/secrets")
    await call("GET", `/v0/agents/${agent}`)
    await call("GET", `/v0/agents/${agent}/events`)
    assert.strictEqual((await call("DELETE", `/v0/secrets/${id}`)).status, 409)
    assert.strictEqual((await call("DELETE", `/v0/agents/${agent}/secrets/${id}`)).status, 200)
    assert.strictEqual((await call("POST", `/v0/agents/${agent}/restart`, {})).status, 200)
    assert.strictEqual((await call("DELETE", `/v0/secrets/${id}`)).status, 200)
    const keyRing = () => JSON.parse(readFileSync(join(dataDir, "secrets.key"), "utf8")) as { current: string; keys: Record<string, string> }
    const before = keyRing().current
    const rotated = cli(ops, "secrets", "rotate-master-key")
    assert.match(rotated, /^Rewrapped 1 workspace data key/)
    // A new master key, the old one gone from the ring, and the workspace's secrets still open (online, no restart).
    assert.notStrictEqual(keyRing().current, before)
    assert.deepStrictEqual(Object.keys(keyRing().keys), [keyRing().current])
    assert.strictEqual((await call("POST", `/v0/agents/${agent}/secrets`, { secretIds: [oauth] })).status, 200)
    assert.strictEqual((await call("POST", `/v0/agents/${agent}/restart`, {})).status, 200)
    assert.deepStrictEqual((await call("GET", `/v0/agents/${agent}`)).body.secrets.map((s: { name: string; synced: boolean }) => [s.name, s.synced]), [["ANTHROPIC_OAUTH_TOKEN", true]])
    await call("DELETE", `/v0/agents/${agent}`)

    server.child.kill("SIGTERM")
    assert.strictEqual(await server.exited, 0, server.output())

    assert.deepStrictEqual(hits(bodies.join("\n")), [], "a response body")
    assert.deepStrictEqual(hits(server.output()), [], "the server's log")
    assert.include(server.output(), "DEBUG", "debug logging was on")

    const tables = await Effect.runPromise(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const names = yield* sql<{ table_name: string }>`SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'`
      const dumped: Array<string> = []
      for (const { table_name } of names) {
        const rows = yield* sql<{ row: string }>`SELECT t::text AS row FROM ${sql(table_name)} t`
        dumped.push(`${table_name}: ${rows.map((r) => r.row).join("\n")}`)
      }
      return { names: names.map((n) => n.table_name), dumped: dumped.join("\n") }
    }).pipe(Effect.provide(PgDatabase.layerPglite(join(dataDir, "pg"))), Effect.scoped))
    assert.includeMembers(tables.names, ["cairn_events", "cairn_secrets", "cairn_agent_secrets", "cairn_data_keys"])
    assert.include(tables.dumped, "ANTHROPIC_API_KEY", "the tables were read")
    assert.deepStrictEqual(hits(tables.dumped), [], "a table")

    for (const file of filesUnder(dataDir)) {
      assert.deepStrictEqual(hits(textOf(file)), [], file)
    }
  })
})
