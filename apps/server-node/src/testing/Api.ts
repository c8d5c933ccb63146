/** A user of a running server: a workspace and a key made with the admin CLI, and JSON calls with that key. */
import * as Http from "node:http"
import { Readable } from "node:stream"
import { cli } from "./Cli.ts"

export interface ApiResponse {
  readonly status: number
  // Tests read whatever the server answered.
  readonly body: any
}

export interface ApiUser {
  readonly workspaceId: string
  readonly token: string
  readonly call: (method: string, path: string, body?: unknown) => Promise<ApiResponse>
}

/**
 * Lets the event loop take in what the sockets received while it was blocked. The CLI helpers run synchronously, and
 * on a loaded machine a few of them outlast the server's keep-alive (65 s): the server has closed the pooled
 * connection, but fetch has not seen it yet and would reuse it (`write EPIPE`). Call before a request that may
 * follow them.
 */
export const ioSettled = () => new Promise<void>((resolve) => setImmediate(resolve))

/**
 * A request to the server with an optional bearer `token`: what the `/v3` suites send beside the SDK. The CLI runs
 * synchronously between calls; on a loaded machine that outlasts the server's keep-alive, and the next request lands
 * on a connection the server has just closed: it is sent again, once, on a new one.
 */
export const serverFetch = (server: { readonly url: string }) =>
  async (path: string, init: RequestInit & { readonly token?: string } = {}): Promise<Response> => {
    const send = () =>
      fetch(`${server.url}${path}`, {
        ...init,
        headers: { ...(init.token === undefined ? {} : { authorization: `Bearer ${init.token}` }), ...(init.headers as Record<string, string> ?? {}) }
      })
    try {
      return await send()
    } catch (error) {
      if ((error as { cause?: { code?: string } }).cause?.code !== "UND_ERR_SOCKET") throw error
      return send()
    }
  }

export const newApiUser = (
  ops: { readonly url: string; readonly dataDir: string },
  options: { readonly workspace: string; readonly agentLimit?: number; readonly plan?: "free" | "pro"; readonly scopes: string }
): ApiUser => {
  const workspaceId = cli(ops, "workspace", "create", "--name", options.workspace,
    ...(options.agentLimit === undefined ? [] : ["--agent-limit", String(options.agentLimit)]),
    ...(options.plan === undefined ? [] : ["--plan", options.plan]))
  const token = cli(ops, "key", "create", "--workspace", workspaceId, "--user", "ada", "--scopes", options.scopes)
  const call = async (method: string, path: string, body?: unknown): Promise<ApiResponse> => {
    await ioSettled()
    const response = await fetch(`${ops.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}` },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    const text = await response.text()
    return { status: response.status, body: text === "" ? undefined : JSON.parse(text) }
  }
  return { workspaceId, token, call }
}

/**
 * Waits until the agent runs (asked through `call` every half second), for up to `timeoutMs`; the error shows the
 * end of the server's output.
 */
export const untilRunning = async (
  call: (method: string, path: string) => Promise<ApiResponse>,
  agentId: string,
  output: () => string,
  timeoutMs = 240_000
) => {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if ((await call("GET", `/v0/agents/${agentId}`)).body?.agent?.status === "running") return
    await new Promise((resolve) => setTimeout(resolve, 500))
  }
  throw new Error(`agent ${agentId} never ran\n${output().slice(-4_000)}`)
}

/**
 * A `fetch` for the openai client that sends every request to the server, whatever host its URL names, with that
 * host as the Host header: what DNS for `*.agents.localhost` would do (glibc does not resolve it here).
 */
export const fetchThrough = (server: { readonly url: string }) =>
  async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const request = new Request(input, init)
    const url = new URL(request.url)
    const target = new URL(server.url)
    const body = request.body === null ? undefined : Buffer.from(await request.arrayBuffer())
    const headers: Http.OutgoingHttpHeaders = Object.fromEntries(request.headers)
    headers["host"] = url.host
    return new Promise<Response>((resolve, reject) => {
      const outgoing = Http.request({ host: target.hostname, port: target.port, method: request.method, path: `${url.pathname}${url.search}`, headers, agent: false }, (response) => {
        const answer = new Headers()
        for (const [name, value] of Object.entries(response.headers)) {
          if (value !== undefined) answer.set(name, Array.isArray(value) ? value.join(", ") : value)
        }
        resolve(new Response(Readable.toWeb(response) as ReadableStream, { status: response.statusCode!, headers: answer }))
      })
      outgoing.on("error", reject)
      outgoing.end(body)
    })
  }

/** What `requestWithHost` got back: the status, headers, body, and the body as JSON when it is JSON. */
export interface HostReply {
  readonly status: number
  readonly headers: Http.IncomingHttpHeaders
  readonly text: string
  // Tests read whatever came back.
  readonly json: any
}

/**
 * A request to the server with a Host header of the test's choosing (fetch cannot set one, and `*.localhost` does
 * not resolve here): an app's domain, an agent's own host.
 */
export const requestWithHost = (
  server: { readonly url: string },
  host: string,
  path: string,
  options: { method?: string; headers?: Http.OutgoingHttpHeaders; body?: string } = {}
) =>
  new Promise<HostReply>((resolve, reject) => {
    const url = new URL(server.url)
    const request = Http.request({
      host: url.hostname,
      port: url.port,
      path,
      method: options.method ?? "GET",
      headers: { host, ...options.headers },
      agent: false
    }, (response) => {
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
