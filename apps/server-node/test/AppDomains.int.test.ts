/**
 * Agents' apps on their domains, end to end: a real server process, an agent with a subdomain for a port, and a real
 * app listening there (test/fixtures/app-server.mjs: HTTP and a WebSocket echo), reached through Cairn with the
 * subdomain's Host header. On the simulated engine (always) the test starts the app itself, beside the agent (the
 * simulated engine runs no processes; its apps are on this machine's loopback, as a sandbox's are). On the real
 * engine (ENGINE_IT=openclaw, slow) the app is uploaded into the agent's workspace and started with the console, so
 * it runs inside the agent's sandbox; ending the console command ends the app, and the domain then answers 502.
 */
import { removeDataDir, reserveGatewayPorts } from "@cairn/agent-engine-openclaw/testing"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { type ChildProcess, spawn } from "node:child_process"
import { once } from "node:events"
import { mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { WebSocket } from "ws"
import { type ApiUser, freePort, newApiUser, type ServerProcess, requestWithHost, startServer, waitUntil, waitUntilServing } from "../src/testing/index.ts"

const fixture = join(import.meta.dirname, "fixtures", "app-server.mjs")
const appsDomain = "apps.test"
/** Subdomains are unique across a deployment: names of this run's own, so a second run on the same database passes. */
const run = Math.random().toString(36).slice(2, 8)
const [shop, closed] = [`shop-${run}`, `closed-${run}`]
const servers: Array<{ server: ServerProcess; dataDir: string }> = []
const apps: Array<ChildProcess> = []

const via = requestWithHost

afterAll(async () => {
  for (const app of apps) app.kill("SIGKILL")
  for (const { server, dataDir } of servers) {
    if (server.child.exitCode === null) {
      server.child.kill("SIGTERM")
      await server.exited
    }
    removeDataDir(dataDir)
  }
})


/** Waits until `check` gives something, with the server's output on a timeout. */
const waitFor = <A>(what: string, server: ServerProcess, check: () => Promise<A | undefined>, timeoutMs = 120_000): Promise<A> =>
  waitUntil(what, check, { output: server.output, timeoutMs })


/** A WebSocket to the server for `host`: resolves once open; rejects with the status it was refused with. */
const openSocket = (server: ServerProcess, host: string, path: string) =>
  new Promise<WebSocket>((resolve, reject) => {
    const ws = new WebSocket(`${server.url.replace("http", "ws")}${path}`, { headers: { host } })
    ws.once("open", () => resolve(ws))
    ws.once("unexpected-response", (_request, response) => reject(Object.assign(new Error(`refused ${response.statusCode}`), { status: response.statusCode })))
    ws.once("error", reject)
  })

const exchange = async (ws: WebSocket, message: string) => {
  const reply = once(ws, "message")
  ws.send(message)
  const [data] = await reply
  return String(data)
}

const started = async (env: Record<string, string | undefined>, prefix: string) => {
  const dataDir = mkdtempSync(join(tmpdir(), prefix))
  const server = await startServer({ DATA_DIR: dataDir, APPS_DOMAIN: appsDomain, SNAPSHOTS: "off", ...env })
  servers.push({ server, dataDir })
  await waitUntilServing(server)
  return { server, ops: { url: server.url, dataDir } }
}

const createAgent = async (server: ServerProcess, call: ApiUser["call"], name: string) => {
  const created = await call("POST", "/v0/agents", { name })
  assert.strictEqual(created.status, 201, JSON.stringify(created.body))
  const agentId = created.body.agent.agentId as string
  await waitFor("the agent runs", server, async () =>
    (await call("GET", `/v0/agents/${agentId}`)).body?.agent?.status === "running" ? true : undefined, 180_000)
  return agentId
}

const addSubdomain = async (call: ApiUser["call"], agentId: string, subdomain: string, targetPort: number, protectedRoute = false) => {
  const added = await call("POST", `/v0/agents/${agentId}/domains`, { subdomain, targetPort, protected: protectedRoute })
  assert.strictEqual(added.status, 201, JSON.stringify(added.body))
  assert.strictEqual(added.body.domain.status, "active")
  return added.body.domain.id as string
}

/** What every engine's app must show through its subdomain: HTTP both ways, a WebSocket echo, the token rules. */
const exerciseApp = async (server: ServerProcess, call: ApiUser["call"], agentId: string, host: string, domainId: string) => {
  const posted = await via(server, host, "/orders?id=7", { method: "POST", headers: { "content-type": "text/plain" }, body: "two coffees" })
  assert.strictEqual(posted.status, 200, posted.text)
  assert.deepInclude(posted.json, {
    app: "workspace app",
    method: "POST",
    url: "/orders?id=7",
    body: "two coffees",
    host,
    forwardedHost: host,
    forwardedProto: "http"
  })

  const ws = await openSocket(server, host, "/live")
  assert.strictEqual(await exchange(ws, "hello"), "echo: hello")
  assert.strictEqual(await exchange(ws, "x".repeat(1000)), `echo: ${"x".repeat(1000)}`)
  ws.close()

  // Protected: the agent's gateway token is needed, and never reaches the app.
  const updated = await call("PUT", `/v0/agents/${agentId}/domains/${domainId}`, { protected: true })
  assert.strictEqual(updated.status, 200, JSON.stringify(updated.body))
  // A route is remembered for up to 2 s (docs/operations.md): the change shows once that has passed.
  const refused = await waitFor("the route is protected", server, async () => {
    const reply = await via(server, host, "/private")
    return reply.status === 401 ? reply : undefined
  })
  assert.deepStrictEqual(refused.json, { error: "Unauthorized" })
  const token = (await call("GET", `/v0/agents/${agentId}/gateway-token`)).body.gatewayToken as string
  assert.match(token, /^gw_/)
  const withQuery = await via(server, host, `/private?token=${encodeURIComponent(token)}&page=2`)
  assert.strictEqual(withQuery.status, 200, withQuery.text)
  assert.strictEqual(withQuery.json.url, "/private?page=2")
  const cookie = withQuery.headers["set-cookie"]?.[0] ?? ""
  assert.match(cookie, /^gw_token=[^;]+; Path=\/; HttpOnly; SameSite=Lax$/)
  const withCookie = await via(server, host, "/private", { headers: { cookie: cookie.split(";")[0]! } })
  assert.strictEqual(withCookie.status, 200)
  assert.isNull(withCookie.json.cookie)
  const withBearer = await via(server, host, "/private", { headers: { authorization: `Bearer ${token}` } })
  assert.strictEqual(withBearer.status, 200)
  assert.isNull(withBearer.json.authorization)
  const protectedSocket = await openSocket(server, host, `/live?token=${encodeURIComponent(token)}`)
  assert.strictEqual(await exchange(protectedSocket, "let in"), "echo: let in")
  protectedSocket.close()
  const refusedSocket = await openSocket(server, host, "/live").then(() => undefined, (error: { status: number }) => error.status)
  assert.strictEqual(refusedSocket, 401)
  const rotated = await call("POST", `/v0/agents/${agentId}/gateway-token/rotate`, {})
  assert.strictEqual(rotated.status, 200)
  assert.strictEqual((await via(server, host, "/private", { headers: { authorization: `Bearer ${token}` } })).status, 401, "a rotated token")
  assert.strictEqual((await call("PUT", `/v0/agents/${agentId}/domains/${domainId}`, { protected: false })).status, 200)
  await waitFor("the route is open again", server, async () => (await via(server, host, "/")).status === 200 ? true : undefined)

  // Cairn's own API on its own host is untouched; a subdomain of the apps domain that no agent has is 404.
  assert.strictEqual((await via(server, new URL(server.url).host, "/healthz")).status, 200)
  const unknown = await via(server, `nobody-here.${appsDomain}`, "/")
  assert.strictEqual(unknown.status, 404)
  assert.deepStrictEqual(unknown.json, { error: "Domain not found" })
}

describe("agents' apps on their domains, on the simulated engine", () => {
  it("serves the app through its subdomain's Host: HTTP, a WebSocket echo, protected by the gateway token; 404 for a subdomain no agent has, 502 for an app that is not listening, 404 once the domain is deleted", async () => {
    const { server, ops } = await started({ ENGINE: "simulated", SIMULATED_START_DELAY: "100 millis" }, "cairn-app-domains-")
    const { call } = newApiUser(ops, { workspace: "Apps", agentLimit: 2, scopes: "org:agents" })
    const agentId = await createAgent(server, call, "shop")
    const port = await freePort()
    const app = spawn(process.execPath, [fixture, String(port)], { stdio: ["ignore", "pipe", "inherit"] })
    apps.push(app)
    await once(app.stdout!, "data")

    const domainId = await addSubdomain(call, agentId, shop, port)
    await exerciseApp(server, call, agentId, `${shop}.${appsDomain}`, domainId)
    // The Host header's case and port do not matter.
    assert.strictEqual((await via(server, `${shop.toUpperCase()}.${appsDomain.toUpperCase()}:443`, "/")).json.app, "workspace app")

    const downPort = await freePort()
    await addSubdomain(call, agentId, closed, downPort)
    const down = await via(server, `${closed}.${appsDomain}`, "/")
    assert.strictEqual(down.status, 502)
    assert.deepStrictEqual(down.json, { error: "Bad gateway" })

    assert.strictEqual((await call("DELETE", `/v0/agents/${agentId}/domains/${domainId}`)).status, 200)
    await waitFor("the deleted domain is gone", server, async () => (await via(server, `${shop}.${appsDomain}`, "/")).status === 404 ? true : undefined)
  })
})

// Once per CI run, on the embedded store (domains on both stores: DomainsApi.test.ts and the part above).
const realEngine = process.env["ENGINE_IT"] === "openclaw" && process.env["DATABASE_URL"] === undefined

describe.runIf(realEngine)("agents' apps on their domains, on the real engine", () => {
  it("serves an app started in the agent's workspace with the console: HTTP and a WebSocket echo through the subdomain, 502 once it ends", async () => {
    const { server, ops } = await started({
      ENGINE: undefined,
      OPENCLAW_VERSIONS: "2026.9.5,2026.9.6",
      // Gateway ports no other test process on this machine holds.
      OPENCLAW_BASE_PORT: String(reserveGatewayPorts()),
      SECRETS_MASTER_KEY: btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32)))),
      // The console command that runs the app lasts as long as the test needs it.
      CONSOLE_TIMEOUT_MS: "600000",
      ...(process.env["OPENCLAW_ENGINES_DIR"] === undefined ? {} : { OPENCLAW_ENGINES_DIR: process.env["OPENCLAW_ENGINES_DIR"] })
    }, "cairn-app-domains-openclaw-")
    const { call, token } = newApiUser(ops, { workspace: "Apps on OpenClaw", agentLimit: 1, scopes: "org:agents" })
    const agentId = await createAgent(server, call, "workspace-app")
    const uploaded = await call("POST", `/v0/agents/${agentId}/files/upload`, {
      filename: "app-server.mjs",
      contentBase64: readFileSync(fixture).toString("base64")
    })
    assert.strictEqual(uploaded.status, 200, JSON.stringify(uploaded.body))
    const port = await freePort()
    const domainId = await addSubdomain(call, agentId, "workspace-app", port)
    const host = `workspace-app.${appsDomain}`
    assert.strictEqual((await via(server, host, "/")).status, 502, "nothing listens yet")

    // The app runs as long as its console command: the request stays open until the test aborts it.
    const stop = new AbortController()
    const console = fetch(`${server.url}/v0/agents/${agentId}/console/exec`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}` },
      body: JSON.stringify({ command: `exec node uploads/app-server.mjs ${port}` }),
      signal: stop.signal
    }).then(async (response) => `${response.status} ${await response.text()}`, () => "aborted")
    const first = await waitFor("the app answers through its domain", server, async () => {
      const reply = await via(server, host, "/")
      return reply.status === 200 ? reply : undefined
    })
    assert.strictEqual(first.json.cwd, join(ops.dataDir, "agents", agentId, ".openclaw", "workspace"), "the app runs in the agent's workspace")
    await exerciseApp(server, call, agentId, host, domainId)

    stop.abort()
    assert.strictEqual(await console, "aborted")
    await waitFor("the ended app's domain answers 502", server, async () => (await via(server, host, "/")).status === 502 ? true : undefined)
  }, 400_000)
})
