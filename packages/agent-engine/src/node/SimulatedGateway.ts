/**
 * A simulated agent's gateway as something that listens: a small HTTP server on loopback, opened when the agent's
 * gateway is up and closed when it goes down, so that the agent's own host (decision 0046) has something to proxy
 * to. It serves what the real gateway serves there, in miniature:
 *
 * - `GET /`: a tiny HTML page, "Simulated gateway <agentId>" (the Control UI's stand-in);
 * - `GET /healthz` and `/readyz`: `{"ok":true}`;
 * - `POST /v1/chat/completions` (OpenAI's shape, plain or `stream: true` server-sent chunks): the reply is
 *   `Echo: <the last user message>`; it needs `Authorization: Bearer <the agent's gateway token>`, as the real one
 *   does, else 401;
 * - `POST /v1/responses` (OpenAI's Responses shape, not streamed): the same reply to the last user input;
 * - a WebSocket at `/` (same token) echoing every message back.
 */
import * as Http from "node:http"
import type { Duplex } from "node:stream"
import { WebSocketServer } from "ws"
import type { ListeningGateway } from "../SimulatedAgentEngine.ts"

/** What the simulated engine's `openGateway` option gets back. */
export type SimulatedGateway = ListeningGateway

const sendJson = (response: Http.ServerResponse, status: number, body: unknown) => {
  const text = JSON.stringify(body)
  response.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) })
  response.end(text)
}

const readBody = (request: Http.IncomingMessage) =>
  new Promise<string>((resolve, reject) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    request.on("error", reject)
  })

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

/** The text of a chat message's content: a string, or OpenAI's array of parts (their `text` joined). */
const textOf = (content: unknown): string => {
  if (typeof content === "string") return content
  if (Array.isArray(content)) {
    return content.map((part) => typeof part === "object" && part !== null && typeof (part as { text?: unknown }).text === "string" ? (part as { text: string }).text : "").join("")
  }
  return ""
}

/** The deterministic reply to a chat: `Echo: ` and the last user message. */
export const replyTo = (messages: unknown): string => {
  const list = Array.isArray(messages) ? messages : []
  for (let i = list.length - 1; i >= 0; i--) {
    const message = list[i] as { role?: unknown; content?: unknown } | undefined
    if (message?.role === "user") return `Echo: ${textOf(message.content)}`
  }
  return "Echo: "
}

/** The deterministic reply to a Responses input: a string, or a list of messages (the last user one answered). */
const replyToInput = (input: unknown): string =>
  typeof input === "string" ? `Echo: ${input}` : replyTo(input)

/** Opens the agent's gateway on a free loopback port; `token` gives its current gateway token at each request. */
export const open = async (agentId: string, token: () => string): Promise<SimulatedGateway> => {
  const authorized = (request: Http.IncomingMessage) => request.headers.authorization === `Bearer ${token()}`
  let completions = 0

  const chat = async (request: Http.IncomingMessage, response: Http.ServerResponse) => {
    if (!authorized(request)) return sendJson(response, 401, { error: { message: "Unauthorized", type: "unauthorized" } })
    let body: { model?: unknown; messages?: unknown; stream?: unknown }
    try {
      body = JSON.parse(await readBody(request)) as typeof body
    } catch {
      return sendJson(response, 400, { error: { message: "invalid JSON body", type: "invalid_request_error" } })
    }
    const model = typeof body.model === "string" ? body.model : "openclaw"
    const reply = replyTo(body.messages)
    const id = `chatcmpl-sim-${++completions}`
    const created = Math.floor(Date.now() / 1000)
    const usage = { prompt_tokens: 1, completion_tokens: reply.split(" ").length, total_tokens: 1 + reply.split(" ").length }
    if (body.stream !== true) {
      return sendJson(response, 200, {
        id,
        object: "chat.completion",
        created,
        model,
        choices: [{ index: 0, message: { role: "assistant", content: reply }, finish_reason: "stop" }],
        usage
      })
    }
    response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
    const chunk = (delta: Record<string, unknown>, finish: string | null) =>
      `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`
    response.write(chunk({ role: "assistant" }, null))
    // Word by word, as a model streams.
    for (const piece of reply.match(/\S+\s*/g) ?? []) response.write(chunk({ content: piece }, null))
    response.write(chunk({}, "stop"))
    response.end("data: [DONE]\n\n")
  }

  const responses = async (request: Http.IncomingMessage, response: Http.ServerResponse) => {
    if (!authorized(request)) return sendJson(response, 401, { error: { message: "Unauthorized", type: "unauthorized" } })
    let body: { model?: unknown; input?: unknown }
    try {
      body = JSON.parse(await readBody(request)) as typeof body
    } catch {
      return sendJson(response, 400, { error: { message: "invalid JSON body", type: "invalid_request_error" } })
    }
    const text = replyToInput(body.input)
    const n = ++completions
    const words = text.split(" ").length
    sendJson(response, 200, {
      id: `resp_sim_${n}`,
      object: "response",
      created_at: Math.floor(Date.now() / 1000),
      status: "completed",
      model: typeof body.model === "string" ? body.model : "openclaw",
      output: [{
        type: "message",
        id: `msg_sim_${n}`,
        status: "completed",
        role: "assistant",
        content: [{ type: "output_text", text, annotations: [] }]
      }],
      usage: { input_tokens: 1, output_tokens: words, total_tokens: 1 + words }
    })
  }

  const server = Http.createServer((request, response) => {
    const path = (request.url ?? "/").split("?")[0]
    if (request.method === "POST" && path === "/v1/chat/completions") {
      chat(request, response).catch(() => response.destroy())
      return
    }
    if (request.method === "POST" && path === "/v1/responses") {
      responses(request, response).catch(() => response.destroy())
      return
    }
    if ((request.method === "GET" || request.method === "HEAD") && (path === "/healthz" || path === "/readyz")) {
      return sendJson(response, 200, { ok: true, status: "live" })
    }
    if ((request.method === "GET" || request.method === "HEAD") && (path === "/" || path === "/index.html")) {
      const html = `<!doctype html><html><head><title>Simulated gateway ${escapeHtml(agentId)}</title></head>` +
        `<body><h1>Simulated gateway ${escapeHtml(agentId)}</h1></body></html>\n`
      response.writeHead(200, { "content-type": "text/html; charset=utf-8", "content-length": Buffer.byteLength(html) })
      return response.end(request.method === "HEAD" ? undefined : html)
    }
    sendJson(response, 404, { error: "Not found" })
  })
  const sockets = new WebSocketServer({ noServer: true })
  sockets.on("connection", (socket) => {
    socket.on("message", (data, isBinary) => socket.send(data, { binary: isBinary }))
  })
  server.on("upgrade", (request: Http.IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on("error", () => socket.destroy())
    if ((request.url ?? "/").split("?")[0] !== "/" || !authorized(request)) {
      socket.end("HTTP/1.1 401 Unauthorized\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
      return
    }
    sockets.handleUpgrade(request, socket, head, (ws) => sockets.emit("connection", ws, request))
  })
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => resolve())
  })
  const port = (server.address() as { port: number }).port
  let closed: Promise<void> | undefined
  return {
    port,
    close: () =>
      closed ??= new Promise<void>((resolve) => {
        for (const client of sockets.clients) client.terminate()
        sockets.close()
        server.close(() => resolve())
        server.closeAllConnections()
      })
  }
}
