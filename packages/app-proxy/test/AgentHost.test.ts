/**
 * Each agent's own host through the proxy (AppProxy's `agentHost`), in front of a real Node server ("Cairn"), with a
 * stand-in gateway on loopback that shows what it was sent: `/v0` stays Cairn's; everything else reaches the gateway
 * once admitted, carrying the gateway's token and none of the caller's credentials; refusals are the routing's own.
 */
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { once } from "node:events"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { WebSocket, WebSocketServer } from "ws"
import { AppProxy } from "../src/index.ts"

const listen = async (server: Http.Server) => {
  server.listen(0, "127.0.0.1")
  await once(server, "listening")
  return (server.address() as AddressInfo).port
}

const gateway = Http.createServer((request, response) => {
  const chunks: Array<Buffer> = []
  request.on("data", (chunk: Buffer) => chunks.push(chunk))
  request.on("end", () => {
    response.writeHead(200, { "content-type": "application/json" })
    response.end(JSON.stringify({
      gateway: true,
      method: request.method,
      url: request.url,
      authorization: request.headers.authorization ?? null,
      cookie: request.headers.cookie ?? null,
      forwardedFor: request.headers["x-forwarded-for"] ?? null,
      body: Buffer.concat(chunks).toString()
    }))
  })
})
const gatewaySockets = new WebSocketServer({ server: gateway })
gatewaySockets.on("connection", (socket, request) => socket.on("message", (data) => socket.send(`${request.headers.authorization} ${data.toString()}`)))

const cairn = Http.createServer((request, response) => response.end(`cairn ${request.url} ${request.headers.authorization ?? "-"}`))
// Cairn takes upgrades of its own (without a listener, Node would hand them to `request`).
cairn.on("upgrade", (_request, socket) => socket.destroy())

let cairnPort = 0
let gatewayPort = 0
let running = true

beforeAll(async () => {
  gatewayPort = await listen(gateway)
  AppProxy.attach(cairn, {
    route: async () => undefined,
    authorize: async () => false,
    endpoint: async () => {
      throw new Error("no apps here")
    },
    agentHost: {
      agentOf: (host) => host.endsWith(".agents.test") ? host.slice(0, -".agents.test".length) : undefined,
      admit: async (agentId, credential) => {
        if (agentId !== "a1") return { admitted: false, status: 404, body: { error: "Agent not found" } }
        if (credential.gatewayToken === "gw_good" || credential.bearer === "api-key") return { admitted: true, gatewayToken: "gw_good" }
        if (credential.crossOriginCookie === true) return { admitted: false, status: 401, body: { error: "Unauthorized", reason: "cross-origin-cookie" } }
        return { admitted: false, status: 401, body: { error: "Unauthorized", reason: "test" }, headers: { "www-authenticate": "Bearer realm=\"cairn\"" } }
      },
      gateway: async () =>
        running
          ? { endpoint: { host: "127.0.0.1", port: gatewayPort } }
          : { status: 503, body: { error: "Agent is starting, try again shortly" }, headers: { "retry-after": "5" } }
    }
  })
  cairnPort = await listen(cairn)
})

afterAll(() => {
  cairn.close()
  gateway.close()
  gatewaySockets.close()
})

interface Reply {
  readonly status: number
  readonly headers: Http.IncomingHttpHeaders
  readonly text: string
  readonly json: any
}

const send = (host: string, path: string, options: { method?: string; headers?: Http.OutgoingHttpHeaders; body?: string } = {}) =>
  new Promise<Reply>((resolve, reject) => {
    const request = Http.request({ host: "127.0.0.1", port: cairnPort, path, method: options.method ?? "GET", headers: { host, ...options.headers }, agent: false }, (response) => {
      const chunks: Array<Buffer> = []
      response.on("data", (chunk: Buffer) => chunks.push(chunk))
      response.on("end", () => {
        const text = Buffer.concat(chunks).toString()
        let json: unknown
        try {
          json = JSON.parse(text)
        } catch {
          json = undefined
        }
        resolve({ status: response.statusCode!, headers: response.headers, text, json })
      })
    })
    request.on("error", reject)
    request.end(options.body)
  })

describe("an agent's own host", () => {
  it("leaves /v0 to Cairn, on the agent's host as on any", async () => {
    const reply = await send("a1.agents.test", "/v0/agents/a1?token=gw_good", { headers: { authorization: "Bearer gw_good" } })
    assert.strictEqual(reply.text, "cairn /v0/agents/a1?token=gw_good Bearer gw_good")
    assert.strictEqual((await send("a1.agents.test:8080", "/v0")).text, "cairn /v0 -")
    // `/v0x` is not Cairn's prefix: the gateway's (refused here, without credentials).
    assert.strictEqual((await send("a1.agents.test", "/v0x")).status, 401)
    // Cairn's routes take the cookie too, but not on a request another site's page made.
    const cookie = "gw_token=gw_good"
    assert.strictEqual((await send("a1.agents.test", "/v0/agents/a1", { headers: { cookie, origin: "http://a1.agents.test" } })).text, "cairn /v0/agents/a1 -")
    const forged = await send("a1.agents.test", "/v0/agents/a1/console/exec", { method: "POST", headers: { cookie, origin: "https://evil.apps.test" }, body: "{}" })
    assert.deepStrictEqual([forged.status, forged.json], [401, { error: "Unauthorized", reason: "cross-origin-cookie" }])
    assert.strictEqual((await send("a1.agents.test", "/v0/agents/a1", { headers: { cookie, "sec-fetch-site": "same-site", "sec-fetch-mode": "cors" } })).status, 401)
    assert.strictEqual((await send("a1.agents.test", "/v0/agents/a1", { headers: { authorization: "Bearer key", cookie, origin: "https://evil.apps.test" } })).status, 200)
  })

  it("sends the gateway its own token, never the caller's API key, cookie token or query token", async () => {
    const byKey = await send("A1.Agents.Test:3000", "/v1/chat/completions?x=1", {
      method: "POST",
      headers: { authorization: "Bearer api-key", cookie: "theme=dark" },
      body: "{\"hi\":1}"
    })
    assert.deepStrictEqual(byKey.json, {
      gateway: true,
      method: "POST",
      url: "/v1/chat/completions?x=1",
      authorization: "Bearer gw_good",
      cookie: "theme=dark",
      // A client on this machine is a local client to the gateway, with no forwarding headers.
      forwardedFor: null,
      body: "{\"hi\":1}"
    })
    // One from elsewhere (Caddy in front says who) is named to the gateway, which trusts loopback proxies.
    const remote = await send("a1.agents.test", "/", { headers: { authorization: "Bearer api-key", "x-forwarded-for": "203.0.113.5" } })
    assert.strictEqual(remote.json.forwardedFor, "203.0.113.5, 127.0.0.1")
    const byCookie = await send("a1.agents.test", "/assets/app.js", { headers: { cookie: "gw_token=gw_good; theme=dark" } })
    assert.deepInclude(byCookie.json, { url: "/assets/app.js", authorization: "Bearer gw_good", cookie: "theme=dark" })
    // A POST with ?token= is not redirected (its body would be lost): served, and the cookie set.
    const posted = await send("a1.agents.test", "/v1/responses?token=gw_good", { method: "POST", body: "x" })
    assert.deepInclude(posted.json, { url: "/v1/responses", authorization: "Bearer gw_good" })
    assert.match(String(posted.headers["set-cookie"]), /^gw_token=gw_good; Path=\/; HttpOnly; SameSite=Lax$/)
  })

  it("takes the cookie only from the host's own pages: not on a request another site's page made", async () => {
    const cookie = "gw_token=gw_good"
    const own = await send("a1.agents.test:3000", "/v1/chat/completions", { method: "POST", headers: { cookie, origin: "http://a1.agents.test:3000" }, body: "{}" })
    assert.strictEqual(own.status, 200)
    const behindTls = await send("a1.agents.test", "/", { headers: { cookie, origin: "https://a1.agents.test", "sec-fetch-site": "same-origin" } })
    assert.strictEqual(behindTls.status, 200)
    // Another agent's app on a sibling domain is same-site: its page may not ride on the cookie.
    for (const headers of [
      { origin: "https://evil.apps.test" },
      { origin: "null" },
      { "sec-fetch-site": "same-site", "sec-fetch-mode": "cors" },
      { "sec-fetch-site": "cross-site", "sec-fetch-mode": "no-cors" }
    ]) {
      const refused = await send("a1.agents.test", "/v1/chat/completions", { method: "POST", headers: { cookie, ...headers }, body: "{}" })
      assert.deepStrictEqual([refused.status, refused.json], [401, { error: "Unauthorized", reason: "cross-origin-cookie" }], JSON.stringify(headers))
    }
    // A link followed from elsewhere opens the page; an explicit bearer is fine from anywhere.
    assert.strictEqual((await send("a1.agents.test", "/", { headers: { cookie, "sec-fetch-site": "cross-site", "sec-fetch-mode": "navigate" } })).status, 200)
    assert.strictEqual((await send("a1.agents.test", "/v1/chat/completions", { method: "POST", headers: { authorization: "Bearer gw_good", origin: "https://elsewhere.example" }, body: "{}" })).status, 200)
    // A cross-origin WebSocket with only the cookie is refused too.
    const ws = new WebSocket(`ws://127.0.0.1:${cairnPort}/`, { headers: { host: "a1.agents.test", cookie, origin: "https://evil.apps.test" } })
    ws.on("error", () => undefined)
    const [, response] = await once(ws, "unexpected-response") as [unknown, Http.IncomingMessage]
    assert.strictEqual(response.statusCode, 401)
    ws.terminate()
  })

  it("turns ?token= on a GET into the cookie and a redirect to the same URL without it", async () => {
    const reply = await send("a1.agents.test", "/chat?session=main&token=gw_good")
    assert.strictEqual(reply.status, 302)
    assert.strictEqual(reply.headers.location, "/chat?session=main")
    assert.match(String(reply.headers["set-cookie"]), /^gw_token=gw_good; Path=\/; HttpOnly; SameSite=Lax$/)
    // Behind TLS (Caddy says so), the cookie is Secure.
    const secure = await send("a1.agents.test", "/?token=gw_good", { headers: { "x-forwarded-proto": "https" } })
    assert.match(String(secure.headers["set-cookie"]), /; Secure$/)
    assert.strictEqual(secure.headers.location, "/")
  })

  it("answers the routing's refusals as they are: unknown agent, bad credentials, a gateway that is not up", async () => {
    const unknown = await send("zz.agents.test", "/")
    assert.deepStrictEqual([unknown.status, unknown.json], [404, { error: "Agent not found" }])
    const refused = await send("a1.agents.test", "/", { headers: { authorization: "Bearer gw_bad" } })
    assert.deepStrictEqual([refused.status, refused.json], [401, { error: "Unauthorized", reason: "test" }])
    assert.strictEqual(refused.headers["www-authenticate"], "Bearer realm=\"cairn\"")
    running = false
    try {
      const starting = await send("a1.agents.test", "/", { headers: { authorization: "Bearer gw_good" } })
      assert.deepStrictEqual([starting.status, starting.json, starting.headers["retry-after"]], [503, { error: "Agent is starting, try again shortly" }, "5"])
    } finally {
      running = true
    }
  })

  it("relays a WebSocket to the gateway with the gateway's token, and refuses one without credentials", async () => {
    const ws = new WebSocket(`ws://127.0.0.1:${cairnPort}/?token=gw_good`, { headers: { host: "a1.agents.test" } })
    await once(ws, "open")
    const reply = once(ws, "message")
    ws.send("ping")
    assert.strictEqual(String((await reply)[0]), "Bearer gw_good ping")
    ws.close()
    const refused = new WebSocket(`ws://127.0.0.1:${cairnPort}/`, { headers: { host: "a1.agents.test" } })
    refused.on("error", () => undefined)
    const [, response] = await once(refused, "unexpected-response") as [unknown, Http.IncomingMessage]
    assert.strictEqual(response.statusCode, 401)
    refused.terminate()
  })
})
