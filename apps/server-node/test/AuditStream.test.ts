/**
 * The audit feed on a real server (issue 37 item 5, decision 0050). `GET /v0/audit/stream`: a consumer that
 * disconnects mid-way and comes back with `Last-Event-ID` gets exactly the rest (compared against the whole list
 * read again from the start: no gap, no duplicate), only its own workspace's events (another workspace busy at the same
 * time never shows), and never a secret's value or ciphertext. Audit webhooks: a receiver on loopback that fails the
 * first deliveries gets every event exactly once, in order, each signature checked here with node:crypto; a receiver
 * that keeps failing while Cairn is stopped and started again gets the rest after the restart, from where it stopped.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { createHmac, timingSafeEqual } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Cluster from "../src/testing/Cluster.ts"
import { type ApiUser, newApiUser, type ServerProcess, startServer, stopServer, waitUntil, waitUntilServing } from "../src/testing/index.ts"

interface Sse {
  readonly id: string
  readonly event: string
  readonly data: { type: string; at: string; actor: string | null; stream: string; version: number; data: any }
}

/** An open `/v0/audit/stream`: the complete events received so far, everything received, and a way to hang up. */
const openStream = async (server: { readonly url: string }, token: string, headers: Record<string, string> = {}, query = "") => {
  const controller = new AbortController()
  const response = await fetch(`${server.url}/v0/audit/stream${query}`, {
    headers: { authorization: `Bearer ${token}`, ...headers },
    signal: controller.signal
  })
  const events: Array<Sse> = []
  let raw = ""
  if (response.ok) {
    const reader = response.body!.getReader()
    const decoder = new TextDecoder()
    let buffer = ""
    void (async () => {
      try {
        for (;;) {
          const { done, value } = await reader.read()
          if (done) return
          const text = decoder.decode(value, { stream: true })
          raw += text
          buffer += text
          for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
            const block = buffer.slice(0, end)
            buffer = buffer.slice(end + 2)
            const fields: Record<string, string> = {}
            for (const line of block.split("\n")) {
              if (line.startsWith(":")) continue
              const colon = line.indexOf(": ")
              fields[line.slice(0, colon)] = line.slice(colon + 2)
            }
            if (fields["id"] !== undefined) events.push({ id: fields["id"], event: fields["event"]!, data: JSON.parse(fields["data"]!) })
          }
        }
      } catch {
        // hung up
      }
    })()
  }
  return { response, events, raw: () => raw, close: () => controller.abort() }
}

type Stream = Awaited<ReturnType<typeof openStream>>

const dataDir = mkdtempSync(join(tmpdir(), "cairn-audit-"))
const canary = `sk-ant-api03-AUDIT${crypto.randomUUID().replace(/-/g, "")}`
// Given, so that secrets and webhook keys can be sealed on Postgres too (only an embedded server makes its own).
const masterKey = btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))))
// On Postgres, a database of its own: on CI's shared one, every other test's server (with other keys) would compete for
// the webhooks' delivery lease, and a stream with no cursor would scan every other test's events.
const cleanups: Cluster.Cleanups = []
const database = process.env["DATABASE_URL"] === undefined ? {} : { DATABASE_URL: Cluster.freshDatabase(process.env["DATABASE_URL"], cleanups) }
let server: ServerProcess
let port: number
let ada: ApiUser
let bob: ApiUser

const start = async () => {
  server = await startServer({ ...database, DATA_DIR: dataDir, ENGINE: "simulated", SECRETS_MASTER_KEY: masterKey, ...(port === undefined ? {} : { PORT: String(port) }) })
  await waitUntilServing(server)
  port = Number(new URL(server.url).port)
}

beforeAll(async () => {
  await start()
  ada = newApiUser({ url: server.url, dataDir }, { workspace: "Audited", scopes: "org:agents" })
  bob = newApiUser({ url: server.url, dataDir }, { workspace: "Other", scopes: "org:agents" })
}, 120_000)

afterAll(async () => {
  if (server !== undefined) await stopServer(server, dataDir)
  else rmSync(dataDir, { recursive: true, force: true })
  for (const cleanup of cleanups.reverse()) await cleanup()
})

const secret = async (user: ApiUser, name: string) => {
  const created = await user.call("POST", "/v0/secrets", { name, value: `${canary}-${name}` })
  assert.strictEqual(created.status, 201, JSON.stringify(created.body))
  return created.body.secret.id as string
}

const until = (what: string, stream: Stream, found: (events: ReadonlyArray<Sse>) => boolean) =>
  waitUntil(what, () => (found(stream.events) ? true : undefined), { output: server.output, timeoutMs: 30_000 })

const named = (name: string) => (events: ReadonlyArray<Sse>) => events.some((e) => e.event === "SecretCreated" && e.data.data.name === name)

/** Ada's whole feed, read again from the start, up to the secret `last`. */
const wholeFeed = async (last: string) => {
  const whole = await openStream(server, ada.token)
  await until(`the whole feed reaches ${last}`, whole, named(last))
  whole.close()
  const end = whole.events.findIndex((e) => e.event === "SecretCreated" && e.data.data.name === last)
  return { events: whole.events.slice(0, end + 1), raw: whole.raw() }
}

describe("GET /v0/audit/stream", () => {
  it("resumes after Last-Event-ID with no gap and no duplicate, and shows only its own workspace", async () => {
    const bobs: Array<string> = []
    for (let i = 0; i < 4; i++) {
      await secret(ada, `ADA_${i}`)
      bobs.push(await secret(bob, `BOB_${i}`))
    }
    const first = await openStream(server, ada.token)
    assert.strictEqual(first.response.status, 200)
    assert.match(first.response.headers.get("content-type") ?? "", /^text\/event-stream/)
    await until("the first connection sees ADA_2", first, named("ADA_2"))
    first.close()
    const seen = [...first.events]
    const lastId = seen.at(-1)!.id

    // While it is away: more of Ada's events (a changed value, a delete) and of Bob's.
    for (let i = 4; i < 8; i++) {
      await secret(ada, `ADA_${i}`)
      bobs.push(await secret(bob, `BOB_${i}`))
    }
    const ada0 = seen.find((e) => e.event === "SecretCreated" && e.data.data.name === "ADA_0")!.data.stream.slice("secret-".length)
    assert.strictEqual((await ada.call("PUT", `/v0/secrets/${ada0}`, { value: `${canary}-changed` })).status, 200)
    assert.strictEqual((await ada.call("DELETE", `/v0/secrets/${ada0}`)).status, 200)
    await secret(ada, "ADA_LAST")

    const resumed = await openStream(server, ada.token, { "last-event-id": lastId })
    assert.strictEqual(resumed.response.status, 200)
    await until("the resumed connection sees ADA_LAST", resumed, named("ADA_LAST"))
    resumed.close()

    const whole = await wholeFeed("ADA_LAST")
    const ids = (events: ReadonlyArray<Sse>) => events.map((e) => e.id)
    // No gap, no duplicate: what the two connections got is the whole feed, each event once, in order.
    assert.deepStrictEqual([...ids(seen), ...ids(resumed.events)], ids(whole.events))
    assert.strictEqual(new Set(ids(whole.events)).size, whole.events.length)
    assert.isAbove(seen.length, 3)
    assert.isAbove(resumed.events.length, 3)
    // `?after=` is the same cursor.
    const after = await openStream(server, ada.token, {}, `?after=${encodeURIComponent(lastId)}`)
    await until("?after= sees ADA_LAST", after, named("ADA_LAST"))
    after.close()
    assert.deepStrictEqual(ids(after.events).slice(0, resumed.events.length), ids(resumed.events))

    // What a monitor sees: each type, its workspace's, its actor; every change to the workspace's secrets.
    const types = whole.events.map((e) => e.event)
    for (const type of ["WorkspaceCreated", "ApiKeyIssued", "SecretCreated", "SecretValueChanged", "SecretDeleted"]) assert.include(types, type)
    for (const e of whole.events) {
      assert.strictEqual(e.event, e.data.type)
      if (e.data.data.workspaceId !== undefined) assert.strictEqual(e.data.data.workspaceId, ada.workspaceId)
    }
    assert.strictEqual(whole.events.find((e) => e.event === "SecretValueChanged")!.data.actor, "ada")
    // Never another workspace's: Bob's secrets were recorded all along, and are in his own feed only.
    const raw = whole.raw
    assert.notInclude(raw, bob.workspaceId)
    for (const id of bobs) assert.notInclude(raw, id)
    assert.notInclude(raw, "BOB_")
    const bobsFeed = await openStream(server, bob.token)
    await until("Bob's feed sees BOB_7", bobsFeed, named("BOB_7"))
    bobsFeed.close()
    assert.notInclude(bobsFeed.raw(), ada.workspaceId)
    assert.notInclude(bobsFeed.raw(), "ADA_")
    // Never a value, nor its ciphertext.
    assert.notInclude(raw, canary)
    assert.notInclude(raw, "ciphertext")
  })

  it("refuses a cursor it did not give, a missing key and a key without the scope", async () => {
    const bad = await openStream(server, ada.token, { "last-event-id": "not-a-position" })
    assert.strictEqual(bad.response.status, 400)
    assert.deepStrictEqual(await bad.response.json(), { error: "Validation failed: Last-Event-ID is not an event id of this stream" })
    const anonymous = await fetch(`${server.url}/v0/audit/stream`)
    assert.strictEqual(anonymous.status, 401)
    await anonymous.body?.cancel()
    const reader = newApiUser({ url: server.url, dataDir }, { workspace: "Reader", scopes: "org:files:read" })
    const refused = await fetch(`${server.url}/v0/audit/stream`, { headers: { authorization: `Bearer ${reader.token}` } })
    assert.strictEqual(refused.status, 403)
    await refused.body?.cancel()
  })
})

/** A webhook receiver on loopback: checks each signature, fails while told to, and records what it accepted. */
const receiver = async () => {
  const state = {
    key: "",
    failNext: 0,
    failAll: false,
    attempts: 0,
    failures: 0,
    badSignatures: 0,
    delivered: [] as Array<{ id: string; type: string; body: any }>
  }
  const listener = http.createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      state.attempts++
      const body = Buffer.concat(chunks)
      const expected = Buffer.from(`sha256=${createHmac("sha256", state.key).update(body).digest("hex")}`)
      const given = Buffer.from(String(request.headers["x-cairn-signature"] ?? ""))
      const parsed = JSON.parse(body.toString("utf8"))
      if (given.length !== expected.length || !timingSafeEqual(given, expected) || parsed.timestamp !== request.headers["x-cairn-timestamp"] ||
        parsed.id !== request.headers["x-cairn-event-id"]) {
        state.badSignatures++
        response.writeHead(401).end()
        return
      }
      if (state.failAll || state.failNext > 0) {
        if (state.failNext > 0) state.failNext--
        state.failures++
        response.writeHead(503).end("not now")
        return
      }
      state.delivered.push({ id: parsed.id, type: parsed.type, body: parsed })
      response.writeHead(204).end()
    })
  })
  await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve))
  return { state, url: `http://127.0.0.1:${(listener.address() as AddressInfo).port}/hook`, close: () => listener.close() }
}

describe("audit webhooks", () => {
  it("deliver every event once, in order and signed, through failures and a restart of Cairn", { timeout: 180_000 }, async () => {
    const hook = await receiver()
    try {
      for (const url of ["ftp://127.0.0.1/hook", "not a url", "http://user:pw@127.0.0.1/hook", undefined]) {
        const refused = await ada.call("POST", "/v0/audit/webhooks", url === undefined ? {} : { url })
        assert.strictEqual(refused.status, 400, JSON.stringify(refused.body))
        assert.match(refused.body.error, /^Validation failed: /)
      }
      hook.state.failNext = 3
      const registered = await ada.call("POST", "/v0/audit/webhooks", { url: hook.url })
      assert.strictEqual(registered.status, 201, JSON.stringify(registered.body))
      const key = registered.body.secret as string
      assert.match(key, /^whsec_[A-Za-z0-9_-]{43}$/)
      hook.state.key = key
      const webhookId = registered.body.webhook.id as string
      const listed = await ada.call("GET", "/v0/audit/webhooks")
      assert.deepStrictEqual(listed.body.webhooks.map((w: { id: string; url: string }) => [w.id, w.url]), [[webhookId, hook.url]])
      assert.notInclude(JSON.stringify(listed.body), key)
      assert.deepStrictEqual((await bob.call("GET", "/v0/audit/webhooks")).body, { webhooks: [] })
      assert.strictEqual((await bob.call("DELETE", `/v0/audit/webhooks/${webhookId}`)).status, 404)

      for (let i = 0; i < 4; i++) {
        await secret(ada, `HOOK_${i}`)
        await secret(bob, `BOBHOOK_${i}`)
      }
      const isCreated = (name: string) => (d: { type: string; body: any }) => d.type === "SecretCreated" && d.body.data.name === name
      await waitUntil("HOOK_3 is delivered", () => (hook.state.delivered.some(isCreated("HOOK_3")) ? true : undefined), { output: server.output, timeoutMs: 60_000 })
      assert.strictEqual(hook.state.failures, 3)
      assert.strictEqual(hook.state.badSignatures, 0)

      // The receiver fails everything; Cairn is stopped while it retries, and started again.
      hook.state.failAll = true
      for (let i = 4; i < 7; i++) await secret(ada, `HOOK_${i}`)
      const failuresBefore = hook.state.failures
      await waitUntil("a delivery fails", () => (hook.state.failures > failuresBefore ? true : undefined), { output: server.output })
      server.child.kill("SIGTERM")
      assert.strictEqual(await server.exited, 0)
      const beforeRestart = hook.state.delivered.length
      await start()
      hook.state.failAll = false
      await waitUntil("HOOK_6 is delivered after the restart", () => (hook.state.delivered.some(isCreated("HOOK_6")) ? true : undefined), {
        output: server.output,
        timeoutMs: 90_000
      })
      assert.isAbove(hook.state.delivered.length, beforeRestart)

      // Exactly the feed from the registration on: each event once, in log order, only Ada's.
      const whole = await wholeFeed("HOOK_6")
      const from = whole.events.findIndex((e) => e.event === "AuditWebhookRegistered" && e.data.data.webhookId === webhookId)
      assert.isAtLeast(from, 0)
      const expected = whole.events.slice(from + 1).map((e) => e.id)
      const delivered = hook.state.delivered.map((d) => d.id)
      assert.deepStrictEqual(delivered.slice(0, expected.length), expected)
      assert.strictEqual(new Set(delivered).size, delivered.length)
      assert.strictEqual(hook.state.badSignatures, 0)
      for (const d of hook.state.delivered) {
        assert.strictEqual(d.body.webhookId, webhookId)
        assert.notInclude(JSON.stringify(d.body), bob.workspaceId)
        assert.notInclude(JSON.stringify(d.body), canary)
      }
      // The signing key is in no event of the feed, nor in the server's log.
      assert.notInclude(whole.raw, key)
      assert.notInclude(server.output(), key)
      assert.match((await ada.call("GET", "/v0/audit/webhooks")).body.webhooks[0].deliveredUpTo, /^\d+:\d+$/)

      // Removed: nothing more is delivered.
      assert.strictEqual((await ada.call("DELETE", `/v0/audit/webhooks/${webhookId}`)).status, 200)
      assert.deepStrictEqual((await ada.call("GET", "/v0/audit/webhooks")).body, { webhooks: [] })
      const attempts = hook.state.attempts
      await secret(ada, "AFTER_REMOVAL")
      await new Promise((resolve) => setTimeout(resolve, 2_000))
      assert.strictEqual(hook.state.attempts, attempts)
    } finally {
      hook.close()
    }
  })
})
