/**
 * Requests for an agent that another node runs, forwarded to that node: in front of a Node HTTP server's own
 * listeners (as AppProxy.ts), a request whose agent (`agentOf`: from its path or its host) is held by another live
 * node (`ownerOf`) is sent there as it came, with its body streamed both ways, its status and headers kept, and a
 * WebSocket upgrade spliced byte for byte; every other request goes on untouched. The receiving node authenticates
 * it as any request. Each forwarded request carries a node-to-node credential (`x-cairn-forwarded`): a request
 * with a valid one is served where it lands and never forwarded again (no loops, whatever the leases say
 * meanwhile), and one with a forged or stale one is treated as the outside request it is (the header dropped).
 * An owner that does not answer: 503 `{"error":"Service unavailable"}` with `Retry-After`.
 */
import * as Http from "node:http"
import type { Socket } from "node:net"
import type { Duplex } from "node:stream"
import { answer, answerSocket, endToEndHeaders, relayUpgrade } from "./AppProxy.ts"

/** The header a forwarded request carries: its credential. */
export const forwardedHeader = "x-cairn-forwarded"

export interface Forwarding {
  /** The agent the request is about, if any: from its path, or from its host's domain. */
  readonly agentOf: (request: Http.IncomingMessage) => string | undefined | Promise<string | undefined>
  /** The base URL (`http://10.0.0.6:3000`) of the other live node that runs the agent; undefined: this node answers. */
  readonly ownerOf: (agentId: string) => Promise<string | undefined>
  /** The credential of a request this node forwards. */
  readonly sign: (method: string, url: string) => string
  /** Whether a request's credential is one a node of this cluster made for it, recently. */
  readonly verify: (credential: string, method: string, url: string) => boolean
  /** Seconds a client may wait before trying again when the agent's node does not answer. */
  readonly retryAfterSeconds: number
  readonly onError?: (message: string, error: unknown) => void
}

/** The agent of an agent-scoped path, `/v0/agents/{agentId}` and everything under it. */
export const agentOfPath = (url: string | undefined): string | undefined => {
  const match = /^\/v0\/agents\/([^/?#]+)(?:[/?#]|$)/.exec(url ?? "")
  if (match === null) return undefined
  try {
    return decodeURIComponent(match[1]!)
  } catch {
    return undefined
  }
}

const isTls = (request: Http.IncomingMessage) => (request.socket as Socket & { encrypted?: boolean }).encrypted === true

/** The request as it goes to the owner: its own headers (Host included), `X-Forwarded-*`, and the credential. */
const outgoingHeaders = (request: Http.IncomingMessage, credential: string, upgrade: boolean): Http.OutgoingHttpHeaders => {
  const headers = endToEndHeaders(request.headers)
  const previous = request.headers["x-forwarded-for"]
  const client = request.socket.remoteAddress ?? ""
  headers["x-forwarded-for"] = previous === undefined || previous === "" ? client : `${previous}, ${client}`
  headers["x-forwarded-proto"] ??= isTls(request) ? "https" : "http"
  headers["x-forwarded-host"] ??= request.headers.host ?? ""
  headers[forwardedHeader] = credential
  if (upgrade) {
    headers["connection"] = "Upgrade"
    headers["upgrade"] = request.headers.upgrade ?? "websocket"
  }
  return headers
}

export const attach = (server: Http.Server, forwarding: Forwarding) => {
  const onError = forwarding.onError ?? (() => undefined)
  // Connections to other nodes are kept open between requests.
  const agent = new Http.Agent({ keepAlive: true, timeout: 30_000 })
  const unavailable = { "retry-after": String(forwarding.retryAfterSeconds) }

  const requestTo = (owner: URL, request: Http.IncomingMessage, headers: Http.OutgoingHttpHeaders, via: Http.Agent | false) =>
    Http.request({
      host: owner.hostname.replace(/^\[|\]$/g, ""),
      port: owner.port === "" ? 80 : Number(owner.port),
      method: request.method ?? "GET",
      path: request.url ?? "/",
      headers,
      agent: via
    })

  const forwardRequest = (request: Http.IncomingMessage, response: Http.ServerResponse, owner: URL, agentId: string) => {
    const headers = outgoingHeaders(request, forwarding.sign(request.method ?? "GET", request.url ?? "/"), false)
    const upstream = requestTo(owner, request, headers, agent)
    upstream.on("socket", (socket) => socket.setNoDelay(true))
    upstream.on("continue", () => response.writeContinue())
    upstream.on("response", (incoming) => {
      response.writeHead(incoming.statusCode ?? 502, incoming.statusMessage, endToEndHeaders(incoming.headers))
      // Headers go out now, so that a response that streams slowly starts at once.
      response.flushHeaders()
      incoming.on("error", () => response.destroy())
      incoming.pipe(response)
    })
    upstream.on("error", (error) => {
      if (response.headersSent) return response.destroy()
      onError(`Node ${owner.host}, which runs agent ${agentId}, did not answer`, error)
      for (const [name, value] of Object.entries(unavailable)) response.setHeader(name, value)
      answer(response, 503, "Service unavailable")
    })
    response.on("close", () => {
      if (!response.writableFinished) upstream.destroy()
    })
    request.on("error", () => upstream.destroy())
    request.pipe(upstream)
  }

  const forwardUpgrade = (request: Http.IncomingMessage, socket: Duplex, head: Buffer, owner: URL, agentId: string) => {
    socket.on("error", () => socket.destroy())
    const headers = outgoingHeaders(request, forwarding.sign(request.method ?? "GET", request.url ?? "/"), true)
    // An upgraded connection is the client's alone: never from, nor back into, the kept-open pool.
    relayUpgrade(socket, head, requestTo(owner, request, headers, false), {
      onNoAnswer: (error) => {
        onError(`Node ${owner.host}, which runs agent ${agentId}, did not answer`, error)
        answerSocket(socket, 503, "Service unavailable")
      }
    })
  }

  const originalEmit = server.emit as (this: Http.Server, event: string | symbol, ...args: Array<any>) => boolean
  const emit = function(this: Http.Server, event: string | symbol, ...args: Array<any>): boolean {
    if (event !== "request" && event !== "checkContinue" && event !== "upgrade") return originalEmit.call(this, event, ...args)
    const request = args[0] as Http.IncomingMessage
    const passOn = () => originalEmit.call(this, event, ...args)
    const credential = request.headers[forwardedHeader]
    if (credential !== undefined) {
      delete request.headers[forwardedHeader]
      // Forwarded by another node: served here, whatever this node thinks of the agent's owner.
      if (typeof credential === "string" && forwarding.verify(credential, request.method ?? "GET", request.url ?? "/")) return passOn()
    }
    const failed = (error: unknown) => {
      onError("Looking up the node of a request's agent failed", error)
      if (event === "upgrade") answerSocket(args[1] as Duplex, 503, "Service unavailable")
      else answer(args[1] as Http.ServerResponse, 503, "Service unavailable")
    }
    const about = forwarding.agentOf(request)
    // Most requests are about no agent, and known to be at once (a path, a host remembered): they go on unawaited.
    if (about === undefined) return passOn()
    Promise.resolve(about).then(async (agentId) => {
      if (agentId === undefined) return passOn()
      const owner = await forwarding.ownerOf(agentId)
      if (owner === undefined) return passOn()
      if (event === "upgrade") forwardUpgrade(request, args[1] as Duplex, args[2] as Buffer, new URL(owner), agentId)
      else forwardRequest(request, args[1] as Http.ServerResponse, new URL(owner), agentId)
    }).catch(failed)
    return true
  }
  server.emit = emit as typeof server.emit

  return {
    detach: () => {
      if (server.emit === emit) server.emit = originalEmit as typeof server.emit
      agent.destroy()
    }
  }
}
