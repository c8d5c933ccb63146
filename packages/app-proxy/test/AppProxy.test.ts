/**
 * The app proxy in front of a real Node server ("Cairn": its own request and upgrade listeners), with real apps
 * behind it on loopback: an HTTP server that echoes, streams and counts, and a WebSocket echo (the `ws` package).
 * Nothing is timed: streaming is shown by one side waiting for the other's first chunk before it sends the rest.
 */
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import * as Http from "node:http"
import { once } from "node:events"
import * as Net from "node:net"
import type { AddressInfo } from "node:net"
import { WebSocket, WebSocketServer } from "ws"
import { AppProxy } from "../src/index.ts"

const listen = async (server: Http.Server) => {
  server.listen(0, "127.0.0.1")
  await once(server, "listening")
  return (server.address() as AddressInfo).port
}

/** A port nothing listens on: bound once, then closed. */
const closedPort = async () => {
  const server = Http.createServer()
  const port = await listen(server)
  server.close()
  await once(server, "close")
  return port
}

/** Resolves when `resolve` is called from elsewhere; for one side to wait on the other. */
const signal = () => {
  let resolve!: () => void
  const promise = new Promise<void>((r) => (resolve = r))
  return { promise, resolve }
}

interface Seen {
  readonly method: string
  readonly url: string
  readonly headers: Http.IncomingHttpHeaders
}

// The app: what it saw last, and signals for the streaming tests.
const seen: Array<Seen> = []
let uploadFirstChunk = signal()
let downloadSecondChunk = signal()

const app = Http.createServer((request, response) => {
  seen.push({ method: request.method!, url: request.url!, headers: request.headers })
  if (request.url === "/download") {
    response.writeHead(200, { "content-type": "text/plain" })
    response.write("first|")
    void downloadSecondChunk.promise.then(() => response.end("second"))
    return
  }
  if (request.url === "/upload") {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => {
      chunks.push(chunk)
      if (chunks.length === 1) uploadFirstChunk.resolve()
    })
    request.on("end", () => response.end(`got ${Buffer.concat(chunks).toString()}`))
    return
  }
  if (request.url === "/cookie") {
    response.writeHead(200, { "set-cookie": "app_cookie=1; Path=/" })
    response.end("with a cookie")
    return
  }
  const chunks: Array<Buffer> = []
  request.on("data", (chunk: Buffer) => chunks.push(chunk))
  request.on("end", () => {
    response.writeHead(201, { "content-type": "application/json", "x-app": "yes" })
    response.end(JSON.stringify({ method: request.method, url: request.url, body: Buffer.concat(chunks).toString() }))
  })
})
const appSockets = new WebSocketServer({ server: app, path: "/ws" })
appSockets.on("connection", (socket, request) => {
  seen.push({ method: "WS", url: request.url!, headers: request.headers })
  socket.on("message", (data, isBinary) => socket.send(isBinary ? data : `echo: ${data.toString()}`, { binary: isBinary }))
})

// Cairn: answers everything itself, and has WebSockets of its own.
const cairnSeen: Array<string> = []
const cairn = Http.createServer((request, response) => {
  cairnSeen.push(`${request.headers.host} ${request.url}`)
  const chunks: Array<Buffer> = []
  request.on("data", (chunk: Buffer) => chunks.push(chunk))
  request.on("end", () => response.end(`cairn ${request.method} ${request.url} ${Buffer.concat(chunks).toString()}`))
})
const cairnSockets = new WebSocketServer({ noServer: true })
cairn.on("upgrade", (request, socket, head) =>
  cairnSockets.handleUpgrade(request, socket, head, (ws) => ws.on("message", (data) => ws.send(`cairn: ${data.toString()}`))))

let appPort = 0
let cairnPort = 0
let downPort = 0
let lookups: Array<string> = []
let cairnConnections = 0
const routes = new Map<string, AppProxy.AppRoute>()

beforeAll(async () => {
  appPort = await listen(app)
  downPort = await closedPort()
  routes.set("open.apps.test", { agentId: "agent-open", targetPort: appPort, protected: false })
  routes.set("shop.example.com", { agentId: "agent-open", targetPort: appPort, protected: false })
  routes.set("locked.apps.test", { agentId: "agent-locked", targetPort: appPort, protected: true })
  routes.set("down.apps.test", { agentId: "agent-down", targetPort: downPort, protected: false })
  routes.set("elsewhere.apps.test", { agentId: "agent-elsewhere", targetPort: appPort, protected: false })
  AppProxy.attach(cairn, {
    route: async (host) => {
      lookups.push(host)
      return routes.get(host)
    },
    authorize: async (agentId, token) => agentId === "agent-locked" && token === "gw_current",
    endpoint: async (agentId, port) => {
      if (agentId === "agent-elsewhere") throw new Error("agent not on this node")
      return { host: "127.0.0.1", port }
    },
    isAppHost: (host) => host.endsWith(".apps.test")
  })
  cairnPort = await listen(cairn)
  // A domain whose app port is Cairn's own: every request to it would come back to the proxy.
  routes.set("loop.apps.test", { agentId: "agent-loop", targetPort: cairnPort, protected: false })
  cairn.on("connection", () => cairnConnections++)
})

afterAll(async () => {
  for (const ws of [...appSockets.clients, ...cairnSockets.clients]) ws.terminate()
  appSockets.close()
  cairnSockets.close()
  app.closeAllConnections()
  cairn.closeAllConnections()
  app.close()
  cairn.close()
})

interface Reply {
  readonly status: number
  readonly headers: Http.IncomingHttpHeaders
  readonly body: string
}

/** A request to Cairn with a Host header of our choosing (fetch would not let us set it). */
const request = (host: string, path: string, options: { method?: string; headers?: Http.OutgoingHttpHeaders; body?: string } = {}) =>
  new Promise<Reply>((resolve, reject) => {
    const req = Http.request({
      host: "127.0.0.1",
      port: cairnPort,
      path,
      method: options.method ?? "GET",
      headers: { host, ...options.headers },
      agent: false
    }, (response) => {
      const chunks: Array<Buffer> = []
      response.on("data", (chunk: Buffer) => chunks.push(chunk))
      response.on("end", () => resolve({ status: response.statusCode!, headers: response.headers, body: Buffer.concat(chunks).toString() }))
      response.on("error", reject)
    })
    req.on("error", reject)
    req.end(options.body)
  })

const lastSeen = () => seen[seen.length - 1]!

/** Opens a WebSocket to Cairn for `host`; resolves once open, or rejects with the status it was refused with. */
const openSocket = (host: string, path: string, headers: Record<string, string> = {}) =>
  new Promise<WebSocket>((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${cairnPort}${path}`, { headers: { host, ...headers } })
    ws.once("open", () => resolve(ws))
    ws.once("unexpected-response", (_request, response) => {
      const chunks: Array<Buffer> = []
      response.on("data", (chunk: Buffer) => chunks.push(chunk))
      response.on("end", () => reject(Object.assign(new Error(`refused ${response.statusCode}`), { status: response.statusCode, body: Buffer.concat(chunks).toString() })))
    })
    ws.once("error", reject)
  })

const exchange = async (ws: WebSocket, message: string) => {
  const reply = once(ws, "message")
  ws.send(message)
  const [data] = await reply
  return String(data)
}

describe("AppProxy", () => {
  it("serves an active domain's host from the agent's app: method, path, body, status and headers both ways", async () => {
    const reply = await request("Open.Apps.Test:8443", "/things?a=1&b=%20", {
      method: "POST",
      headers: { "content-type": "text/plain", "x-forwarded-for": "203.0.113.7" },
      body: "hello app"
    })
    assert.strictEqual(reply.status, 201)
    assert.strictEqual(reply.headers["x-app"], "yes")
    assert.deepStrictEqual(JSON.parse(reply.body), { method: "POST", url: "/things?a=1&b=%20", body: "hello app" })
    const { headers } = lastSeen()
    assert.strictEqual(headers.host, "Open.Apps.Test:8443", "the app gets the request's own Host")
    assert.strictEqual(headers["x-forwarded-host"], "Open.Apps.Test:8443")
    assert.strictEqual(headers["x-forwarded-proto"], "http")
    assert.strictEqual(headers["x-forwarded-for"], "203.0.113.7, 127.0.0.1")
    // A custom domain routes the same way.
    const custom = await request("shop.example.com", "/custom")
    assert.strictEqual(custom.status, 201)
    assert.strictEqual(JSON.parse(custom.body).url, "/custom")
  })

  it("streams a response: the client reads the first chunk before the app writes the rest", async () => {
    downloadSecondChunk = signal()
    const response = await new Promise<Http.IncomingMessage>((resolve, reject) => {
      Http.get({ host: "127.0.0.1", port: cairnPort, path: "/download", headers: { host: "open.apps.test" }, agent: false }, resolve).on("error", reject)
    })
    assert.strictEqual(response.statusCode, 200)
    const [first] = await once(response, "data")
    assert.strictEqual(String(first), "first|")
    downloadSecondChunk.resolve()
    const rest: Array<Buffer> = []
    response.on("data", (chunk: Buffer) => rest.push(chunk))
    await once(response, "end")
    assert.strictEqual(Buffer.concat(rest).toString(), "second")
  })

  it("streams a request body: the app reads the first chunk before the client sends the rest", async () => {
    uploadFirstChunk = signal()
    const reply = new Promise<string>((resolve, reject) => {
      const req = Http.request({ host: "127.0.0.1", port: cairnPort, path: "/upload", method: "PUT", headers: { host: "open.apps.test" }, agent: false }, (response) => {
        const chunks: Array<Buffer> = []
        response.on("data", (chunk: Buffer) => chunks.push(chunk))
        response.on("end", () => resolve(Buffer.concat(chunks).toString()))
      })
      req.on("error", reject)
      req.write("part one, ")
      void uploadFirstChunk.promise.then(() => req.end("part two"))
    })
    assert.strictEqual(await reply, "got part one, part two")
  })

  it("answers `Expect: 100-continue` itself, then sends the body on; streams a body of unknown length; keeps a HEAD bodiless", async () => {
    const continued = await new Promise<{ status: number; body: string; continued: boolean }>((resolve, reject) => {
      let sawContinue = false
      const req = Http.request({
        host: "127.0.0.1",
        port: cairnPort,
        path: "/continue",
        method: "POST",
        headers: { host: "open.apps.test", expect: "100-continue", "content-length": "4" },
        agent: false
      }, (response) => {
        const chunks: Array<Buffer> = []
        response.on("data", (chunk: Buffer) => chunks.push(chunk))
        response.on("end", () => resolve({ status: response.statusCode!, body: Buffer.concat(chunks).toString(), continued: sawContinue }))
      })
      req.on("continue", () => {
        sawContinue = true
        req.end("data")
      })
      req.on("error", reject)
    })
    assert.isTrue(continued.continued, "the client was told to go on")
    assert.strictEqual(continued.status, 201)
    assert.deepStrictEqual(JSON.parse(continued.body), { method: "POST", url: "/continue", body: "data" })
    assert.isUndefined(lastSeen().headers.expect, "the app is not asked again")

    const chunked = await new Promise<string>((resolve, reject) => {
      const req = Http.request({ host: "127.0.0.1", port: cairnPort, path: "/chunked", method: "POST", headers: { host: "open.apps.test" }, agent: false }, (response) => {
        const chunks: Array<Buffer> = []
        response.on("data", (chunk: Buffer) => chunks.push(chunk))
        response.on("end", () => resolve(Buffer.concat(chunks).toString()))
      })
      req.on("error", reject)
      req.write("one,")
      req.end("two")
    })
    assert.deepStrictEqual(JSON.parse(chunked), { method: "POST", url: "/chunked", body: "one,two" })

    const head = await request("open.apps.test", "/things", { method: "HEAD" })
    assert.strictEqual(head.status, 201)
    assert.strictEqual(head.body, "")
  })

  it("carries WebSocket upgrades to the app: text and binary messages echo both ways", async () => {
    const ws = await openSocket("open.apps.test", "/ws?room=1")
    assert.strictEqual(await exchange(ws, "hi"), "echo: hi")
    assert.strictEqual(await exchange(ws, "again"), "echo: again")
    const binary = once(ws, "message")
    ws.send(Buffer.from([0, 1, 2, 255]))
    const [data] = await binary
    assert.deepStrictEqual([...(data as Buffer)], [0, 1, 2, 255])
    assert.strictEqual(lastSeen().url, "/ws?room=1")
    assert.strictEqual(lastSeen().headers["x-forwarded-host"], "open.apps.test")
    const closed = once(ws, "close")
    ws.close()
    await closed
  })

  it("relays an app's refusal of an upgrade", async () => {
    // The app's WebSocket server takes /ws only; elsewhere `ws` answers 400 "Bad Request" itself.
    const error = await openSocket("open.apps.test", "/not-a-socket").then(() => undefined, (e: { status: number; body: string }) => e)
    assert.deepInclude(error, { status: 400, body: "Bad Request" })
  })

  it("protected routes: 401 without the agent's current gateway token, for HTTP and WebSocket alike", async () => {
    for (const headers of [{}, { authorization: "Bearer gw_rotated" }, { authorization: "Bearer sk_api_key" }, { cookie: "gw_token=gw_rotated" }]) {
      const reply = await request("locked.apps.test", "/", { headers })
      assert.strictEqual(reply.status, 401, JSON.stringify(headers))
      assert.deepStrictEqual(JSON.parse(reply.body), { error: "Unauthorized" })
      assert.strictEqual(reply.headers["content-type"], "application/json")
    }
    assert.strictEqual((await request("locked.apps.test", "/?token=gw_rotated")).status, 401)
    const refused = await openSocket("locked.apps.test", "/ws").then(() => undefined, (e: { status: number; body: string }) => e)
    assert.strictEqual(refused?.status, 401)
    assert.deepStrictEqual(JSON.parse(refused!.body), { error: "Unauthorized" })
  })

  it("protected routes: the token as a bearer header, a query parameter or the cookie lets the request through, and never reaches the app", async () => {
    const bearer = await request("locked.apps.test", "/b", { headers: { authorization: "Bearer gw_current" } })
    assert.strictEqual(bearer.status, 201)
    assert.isUndefined(lastSeen().headers.authorization)
    assert.isUndefined(bearer.headers["set-cookie"])

    const query = await request("locked.apps.test", "/q?x=1&token=gw_current&y=%2F")
    assert.strictEqual(query.status, 201)
    assert.strictEqual(lastSeen().url, "/q?x=1&y=%2F", "the token is taken out of the query, the rest kept as sent")
    assert.deepStrictEqual(query.headers["set-cookie"], ["gw_token=gw_current; Path=/; HttpOnly; SameSite=Lax"])
    const onlyToken = await request("locked.apps.test", "/q?token=gw_current")
    assert.strictEqual(onlyToken.status, 201)
    assert.strictEqual(lastSeen().url, "/q")

    const overTls = await request("locked.apps.test", "/cookie?token=gw_current", { headers: { "x-forwarded-proto": "https" } })
    assert.deepStrictEqual(overTls.headers["set-cookie"], ["app_cookie=1; Path=/", "gw_token=gw_current; Path=/; HttpOnly; SameSite=Lax; Secure"])
    assert.strictEqual(lastSeen().headers["x-forwarded-proto"], "https")

    const cookie = await request("locked.apps.test", "/c", { headers: { cookie: "theme=dark; gw_token=gw_current; lang=en" } })
    assert.strictEqual(cookie.status, 201)
    assert.strictEqual(lastSeen().headers.cookie, "theme=dark; lang=en", "the app's own cookies are kept")

    const ws = await openSocket("locked.apps.test", "/ws?token=gw_current")
    assert.strictEqual(await exchange(ws, "let in"), "echo: let in")
    assert.strictEqual(lastSeen().url, "/ws")
    ws.close()
  })

  it("an unprotected route passes tokens and cookies on as they are (they may be the app's own)", async () => {
    await request("open.apps.test", "/p?token=abc", { headers: { authorization: "Bearer gw_current", cookie: "gw_token=x" } })
    assert.strictEqual(lastSeen().url, "/p?token=abc")
    assert.strictEqual(lastSeen().headers.authorization, "Bearer gw_current")
    assert.strictEqual(lastSeen().headers.cookie, "gw_token=x")
  })

  it("a host of the apps domain with no active domain: 404, for HTTP and WebSocket", async () => {
    const reply = await request("nobody.apps.test", "/")
    assert.strictEqual(reply.status, 404)
    assert.deepStrictEqual(JSON.parse(reply.body), { error: "Domain not found" })
    const refused = await openSocket("nobody.apps.test", "/ws").then(() => undefined, (e: { status: number }) => e)
    assert.strictEqual(refused?.status, 404)
  })

  it("an app that is not listening, or not reachable from this node: 502, for HTTP and WebSocket", async () => {
    for (const host of ["down.apps.test", "elsewhere.apps.test"]) {
      const reply = await request(host, "/", { method: "POST", body: "lost" })
      assert.strictEqual(reply.status, 502, host)
      assert.deepStrictEqual(JSON.parse(reply.body), { error: "Bad gateway" })
      const refused = await openSocket(host, "/ws").then(() => undefined, (e: { status: number }) => e)
      assert.strictEqual(refused?.status, 502, host)
    }
  })

  it("leaves Cairn's own requests and WebSockets untouched, and looks their host up once", async () => {
    lookups = []
    for (let i = 0; i < 20; i++) {
      const reply = await request(`127.0.0.1:${cairnPort}`, `/v0/things/${i}`, { method: "POST", body: `n${i}` })
      assert.strictEqual(reply.status, 200)
      assert.strictEqual(reply.body, `cairn POST /v0/things/${i} n${i}`)
    }
    assert.deepStrictEqual(lookups, ["127.0.0.1"], "a Cairn host is remembered")
    assert.strictEqual((await request("api.cairn.test", "/healthz")).body, "cairn GET /healthz ")
    const ws = await openSocket("api.cairn.test", "/v0/stream")
    assert.strictEqual(await exchange(ws, "mine"), "cairn: mine")
    ws.close()
    // A request without a Host header at all (HTTP/1.0) goes to Cairn too.
    const bare = await new Promise<string>((resolve, reject) => {
      const socket = new Net.Socket()
      let text = ""
      socket.connect(cairnPort, "127.0.0.1", () => socket.write("GET /bare HTTP/1.0\r\n\r\n"))
      socket.on("data", (chunk: Buffer) => (text += chunk.toString()))
      socket.on("end", () => resolve(text))
      socket.on("error", reject)
    })
    assert.include(bare, "cairn GET /bare")
  })
  it("refuses a request that comes back through itself (a domain on Cairn's own port) at its second pass: 508", async () => {
    const before = cairnConnections
    const reply = await request("loop.apps.test", "/again")
    assert.strictEqual(reply.status, 508)
    assert.deepStrictEqual(JSON.parse(reply.body), { error: "Loop detected" })
    // The loop was really entered: the client's connection and the proxy's own, back to this server; no more.
    assert.strictEqual(cairnConnections - before, 2)
    assert.notInclude(cairnSeen, "loop.apps.test /again", "Cairn's own listeners never saw it")
    const refused = await openSocket("loop.apps.test", "/ws").then(() => undefined, (e: { status: number; body: string }) => e)
    assert.strictEqual(refused?.status, 508)
    // A hop marker a client makes up is not this proxy's: the request goes on as any other.
    const forged = await request("open.apps.test", "/forged", { headers: { "x-cairn-hop": "made-up" } })
    assert.strictEqual(forged.status, 201)
    assert.strictEqual(lastSeen().headers["x-cairn-hop"]?.toString().startsWith("made-up, "), true)
  })
})
