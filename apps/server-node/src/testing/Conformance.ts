/**
 * One HTTP suite that every runtime Cairn runs on must pass (Node's server, and Cairn's web handler under Bun and
 * Deno): it knows only a base URL and the admin token, so it runs from Node against any server process. It covers
 * health, the admin API, `/v3` uploads (one small, one streamed through several MiB), listings, gets, EIP-712
 * signatures and the gateway, and an agent's whole life on `/v0` (create, read, devices, restart, history, delete).
 * `conformanceOn` runs an entry point on a fresh data directory and registers the suite against it.
 */
import { domain, primaryType, types } from "@cairn/signatures"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { type ChildProcess, spawn } from "node:child_process"
import { createHash } from "node:crypto"
import { once } from "node:events"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as raw from "multiformats/codecs/raw"
import { CID } from "multiformats/cid"
import { sha256 } from "multiformats/hashes/sha2"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { embeddedStorePass, freePort, type ServerProcess, waitUntilServing } from "./ServerProcess.ts"

export interface ConformanceTarget {
  readonly url: string
  readonly adminToken: string
}

/** The admin token the servers these suites start are given. */
export const conformanceAdminToken = "conformance-admin-token"

/**
 * Runs a server entry point (`command args…`, e.g. `bun apps/server-bun/src/main.ts`) on a free loopback port with the
 * simulated engine, the admin token above and `env` (a `DATA_DIR` at least), and waits until it answers.
 */
export const startEntryPoint = async (
  command: string,
  args: ReadonlyArray<string>,
  env: Record<string, string>,
  cwd?: string
): Promise<ServerProcess & ConformanceTarget> => {
  const port = await freePort()
  let output = ""
  const child: ChildProcess = spawn(command, args, {
    env: {
      ...process.env,
      HOST: "127.0.0.1",
      PORT: String(port),
      ENGINE: "simulated",
      SIMULATED_START_DELAY: "100 millis",
      ADMIN_TOKEN: conformanceAdminToken,
      ...env
    },
    stdio: ["ignore", "pipe", "pipe"],
    ...(cwd === undefined ? {} : { cwd })
  })
  child.stdout!.on("data", (chunk) => (output += chunk))
  child.stderr!.on("data", (chunk) => (output += chunk))
  const exited = once(child, "exit").then(([code]) => code as number | null)
  const server = { url: `http://127.0.0.1:${port}`, adminToken: conformanceAdminToken, child, output: () => output, exited }
  try {
    await waitUntilServing(server, 180_000)
  } catch (error) {
    // Not left running behind a failed start.
    child.kill("SIGKILL")
    throw error
  }
  return server
}

interface Reply {
  readonly status: number
  readonly headers: Headers
  // What the server answered, parsed when it is JSON.
  readonly body: any
}

const send = async (target: ConformanceTarget, method: string, path: string, token?: string, body?: RequestInit["body"]): Promise<Reply> => {
  const response = await fetch(`${target.url}${path}`, {
    method,
    headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
    ...(body === undefined ? {} : { body })
  })
  const text = await response.text()
  const json = (response.headers.get("content-type") ?? "").includes("json") && text !== ""
  return { status: response.status, headers: response.headers, body: json ? JSON.parse(text) : text }
}

const uploadForm = (bytes: Uint8Array<ArrayBuffer> | string, name: string) => {
  const form = new FormData()
  form.append("file", new Blob([bytes], { type: "application/octet-stream" }), name)
  form.append("network", "public")
  return form
}

/** Registers the suite's tests (in order: each builds on the one before) against the server `target` gives. */
export const conformance = (target: () => ConformanceTarget) => {
  const state = { token: "", fileId: "", cid: "", createdAt: "", agentId: "" }
  // Content of this run alone: on a database other suites share, a CID someone uploaded first is not ours to sign.
  const content = `hello world ${crypto.randomUUID()}\n`
  const call = (method: string, path: string, body?: unknown) =>
    send(target(), method, path, state.token, body === undefined ? undefined : JSON.stringify(body))

  it("answers health and readiness, and 404 for an unknown route", async () => {
    assert.deepStrictEqual((await send(target(), "GET", "/healthz")).body, { status: "ok" })
    assert.deepStrictEqual((await send(target(), "GET", "/readyz")).body, { status: "ready" })
    assert.strictEqual((await send(target(), "GET", "/no-such-route")).status, 404)
  })

  it("makes a workspace and an API key through the admin API, and refuses a wrong admin token", async () => {
    const admin = (path: string, body: unknown, token = target().adminToken) => send(target(), "POST", path, token, JSON.stringify(body))
    assert.strictEqual((await admin("/admin/workspaces", { name: "Conformance" }, "wrong")).status, 401)
    const workspace = await admin("/admin/workspaces", { name: "Conformance", plan: "pro", agentLimit: 2 })
    assert.strictEqual(workspace.status, 201, JSON.stringify(workspace.body))
    const key = await admin("/admin/keys", { workspaceId: workspace.body.data.id, userId: "ada", scopes: ["org:files:read", "org:files:write", "org:agents"] })
    assert.strictEqual(key.status, 201, JSON.stringify(key.body))
    state.token = key.body.data.token
    assert.strictEqual((await call("GET", "/v3/data/testAuthentication")).status, 200)
    assert.strictEqual((await send(target(), "GET", "/v3/files/public", "not-a-key")).status, 401)
  })

  it("uploads a file on /v3, lists it and gets it", async () => {
    const uploaded = await send(target(), "POST", "/v3/files", state.token, uploadForm(content, "hello.txt"))
    assert.strictEqual(uploaded.status, 200, JSON.stringify(uploaded.body))
    const file = uploaded.body.data
    // The CID Kubo gives a single-block file: CIDv1, raw leaf, sha2-256 of the bytes.
    const bytes = new TextEncoder().encode(content)
    assert.strictEqual(file.cid, CID.create(1, raw.code, await sha256.digest(bytes)).toString())
    assert.strictEqual(file.size, bytes.length)
    Object.assign(state, { fileId: file.id, cid: file.cid, createdAt: file.created_at })
    const got = await call("GET", `/v3/files/public/${file.id}`)
    assert.strictEqual(got.status, 200)
    assert.strictEqual(got.body.data.cid, file.cid)
    const listed = await call("GET", "/v3/files/public")
    assert.deepStrictEqual(listed.body.data.files.map((f: { id: string }) => f.id), [file.id])
    const missing = await call("GET", "/v3/files/public/00000000-0000-4000-8000-000000000000")
    assert.strictEqual(missing.status, 404)
  })

  it("streams a multi-MiB upload in and the same bytes out of the gateway", async () => {
    const bytes = new Uint8Array(5 * 1024 * 1024 + 17)
    for (let i = 0; i < bytes.length; i += 997) bytes[i] = (i / 997) % 251
    const uploaded = await send(target(), "POST", "/v3/files", state.token, uploadForm(bytes, "big.bin"))
    assert.strictEqual(uploaded.status, 200, JSON.stringify(uploaded.body))
    assert.strictEqual(uploaded.body.data.size, bytes.length)
    const served = await fetch(`${target().url}/ipfs/${uploaded.body.data.cid}`)
    assert.strictEqual(served.status, 200)
    const digest = (data: Uint8Array) => createHash("sha256").update(data).digest("hex")
    assert.strictEqual(digest(new Uint8Array(await served.arrayBuffer())), digest(bytes))
  })

  it("answers an upload it refuses before reading its body with the status, not a broken connection", async () => {
    // fetch writes the whole body before it reads: a server that closes the socket under it makes it `fetch failed`.
    const large = new Uint8Array(32 * 1024 * 1024)
    for (const token of ["not-a-key", undefined]) {
      const refused = await send(target(), "POST", "/v3/files", token, uploadForm(large, "large.bin"))
      assert.strictEqual(refused.status, 401)
      assert.strictEqual(refused.body.error, "Unauthorized")
    }
    assert.strictEqual((await call("GET", "/v3/data/testAuthentication")).status, 200)
  })

  it("attaches an EIP-712 signature to the CID, serves it with the content, and removes it", async () => {
    const account = privateKeyToAccount(generatePrivateKey())
    const signature = await account.signTypedData({ domain, types, primaryType, message: { address: account.address, cid: state.cid, date: state.createdAt } })
    const path = `/v3/files/public/signature/${state.cid}`
    const added = await call("POST", path, { signature, address: account.address })
    assert.strictEqual(added.status, 200, JSON.stringify(added.body))
    assert.deepStrictEqual(added.body.data, { cid: state.cid, signature })
    assert.deepStrictEqual((await call("GET", path)).body.data, { cid: state.cid, signature })
    const served = await send(target(), "GET", `/ipfs/${state.cid}`)
    assert.strictEqual(served.body, content)
    assert.strictEqual(served.headers.get("pinata-signature"), signature)
    assert.strictEqual((await call("POST", path, { signature, address: account.address })).status, 409)
    assert.strictEqual((await call("DELETE", path)).status, 200)
    const gone = await call("GET", path)
    assert.strictEqual(gone.status, 404)
    assert.strictEqual(gone.body.error, "Signature not found")
  })

  it("runs an agent's life on /v0: create, read, devices, restart, history, delete", async () => {
    const refused = await call("POST", "/v0/agents", {})
    assert.strictEqual(refused.status, 400)
    assert.strictEqual(refused.body.error, "Validation failed: name is required")
    const created = await call("POST", "/v0/agents", { name: "helper" })
    assert.strictEqual(created.status, 201, JSON.stringify(created.body))
    const agentId = created.body.agent.agentId as string
    assert.strictEqual(created.body.agent.status, "running")
    const read = await call("GET", `/v0/agents/${agentId}`)
    assert.strictEqual(read.status, 200)
    assert.strictEqual(read.body.agent.name, "helper")
    assert.deepStrictEqual((await call("GET", "/v0/agents")).body.agents.map((a: { agentId: string }) => a.agentId), [agentId])
    const devices = await call("GET", `/v0/agents/${agentId}/devices`)
    assert.strictEqual(devices.status, 200)
    assert.deepStrictEqual(devices.body, { pending: [], paired: [] })
    const restarted = await call("POST", `/v0/agents/${agentId}/restart`)
    assert.strictEqual(restarted.status, 200, JSON.stringify(restarted.body))
    assert.strictEqual(restarted.body.agent.status, "running")
    const history = (await call("GET", `/v0/agents/${agentId}/events`)).body.events.map((e: { type: string }) => e.type)
    assert.includeMembers(history, ["AgentCreated", "AgentStarted", "AgentRestartRequested"])
    const deleted = await call("DELETE", `/v0/agents/${agentId}`)
    assert.strictEqual(deleted.status, 200, JSON.stringify(deleted.body))
    const after = await call("GET", `/v0/agents/${agentId}`)
    assert.strictEqual(after.status, 404)
    assert.strictEqual(after.body.error, "Agent not found")
  })
}

/**
 * The suite on `runtime`: starts `command args…` (run from `cwd`) on a fresh data directory before the suite, stops
 * it after (a clean exit, code 0, is part of passing), and registers the suite under `title`.
 */
export const conformanceOn = (
  title: string,
  command: string,
  args: ReadonlyArray<string>,
  options: { readonly cwd?: string; readonly embeddedStoreOnly?: boolean } = {}
) => {
  // Another runtime serves the same handler over the same store code: the store's own pass is Node's.
  if (options.embeddedStoreOnly && !embeddedStorePass) return describe.skip(title, () => conformance(() => ({ url: "", adminToken: "" })))
  const dataDir = mkdtempSync(join(tmpdir(), "cairn-conformance-"))
  let server: Awaited<ReturnType<typeof startEntryPoint>> | undefined
  beforeAll(async () => {
    server = await startEntryPoint(command, args, { DATA_DIR: dataDir }, options.cwd)
  }, 240_000)
  afterAll(async () => {
    server?.child.kill("SIGTERM")
    const code = await server?.exited
    rmSync(dataDir, { recursive: true, force: true })
    if (server !== undefined) assert.strictEqual(code, 0, server.output())
  })
  describe(title, () => conformance(() => server!))
}
