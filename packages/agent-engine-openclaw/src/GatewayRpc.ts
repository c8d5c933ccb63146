/**
 * A client for an OpenClaw gateway's WebSocket RPC (reference features §13), kept open between calls: one call on
 * an open socket costs 20–50 ms, a CLI process per call 1.3–6 s.
 *
 * Protocol (OpenClaw 2026.9, protocol 4): the server opens with the event `connect.challenge` `{nonce, ts}`; the
 * client answers with the request `connect` (`minProtocol`/`maxProtocol` 4, client `gateway-client` in mode `backend`,
 * role `operator`, the operator scopes, `auth.token`), and the server with `hello-ok`. Then each request
 * `{type:"req", id, method, params}` gets one response `{type:"res", id, ok, payload | error}`, where `error` is
 * `{code, message, details?, retryable?, retryAfterMs?}`; other frames are events (`{type:"event", event, payload}`),
 * handed to whoever listens (`onEvent`: a chat turn follows its `chat` events).
 * A loopback `gateway-client`/`backend` with the shared token keeps its scopes without a device identity (OpenClaw's
 * `shouldSkipLocalBackendSelfPairing`), so no pairing is needed.
 *
 * Failures are GatewayRpcError: the engine's own code (`INVALID_REQUEST`, `UNAVAILABLE` for its rate limit on
 * control-plane writes, 30 per 60 s per client, with `retryAfterMs`, …) or one of this client's: `UNAVAILABLE` (no
 * connection could be made), `CLOSED` (the connection dropped; every pending request fails with it), `TIMEOUT`.
 */

import type { Socket } from "node:net"
import type { Duplex } from "node:stream"
import { Agent, WebSocket } from "undici"

/** The protocol this client speaks (OpenClaw's `PROTOCOL_VERSION`). */
export const protocolVersion = 4

/** The operator scopes Cairn asks for: it reads, writes and administers the agent's gateway. */
const operatorScopes = ["operator.read", "operator.write", "operator.admin"]

export class GatewayRpcError extends Error {
  override readonly name = "GatewayRpcError"
  /** The engine's error code (`INVALID_REQUEST`, `UNAVAILABLE`, …), or `UNAVAILABLE`/`CLOSED`/`TIMEOUT` from transport. */
  readonly code: string
  /** The engine's `details` (validation issues, the rate limit, …), when it gave any. */
  readonly details: unknown
  /** How long the engine asks to wait before retrying (its rate limit), when it said. */
  readonly retryAfterMs: number | undefined
  constructor(code: string, message: string, details?: unknown, retryAfterMs?: number) {
    super(message)
    this.code = code
    this.details = details
    this.retryAfterMs = retryAfterMs
  }
}

export interface GatewayClient {
  /** Sends one request and resolves with its payload; an error response or a dropped connection rejects. */
  request(method: string, params?: unknown, options?: { readonly timeoutMs?: number }): Promise<unknown>
  /** Closes the connection; pending requests fail with `CLOSED`. */
  close(): void
  /** Whether the connection is gone (closed by either side): a closed client only fails. */
  readonly closed: boolean
  /** The `hello-ok` payload of the handshake (server version, methods, …). */
  readonly hello: Readonly<Record<string, unknown>>
  /** Calls `listener` with every event the gateway sends from now on, until the returned function is called. */
  onEvent(listener: EventListener): () => void
}

/** An event frame's name and payload; once the connection is gone, `closedEvent` with the GatewayRpcError that ended it. */
export type EventListener = (event: string, payload: unknown) => void

/** The last event a listener gets: the connection closed (no gateway event has this name). */
export const closedEvent = "cairn.connection.closed"

export interface ConnectOptions {
  /** `ws://127.0.0.1:<port>` (or any `ws://` URL with `connect`) */
  readonly url: string
  /** Opens the connection instead of the URL's host and port (into the agent's network: AgentNetwork.ts). */
  readonly connect?: () => Promise<Duplex>
  readonly token: string
  /** How long the whole handshake may take; 10 s by default. */
  readonly timeoutMs?: number
  /** A request's default timeout; 30 s by default. */
  readonly requestTimeoutMs?: number
}

interface Pending {
  readonly resolve: (payload: unknown) => void
  readonly reject: (error: GatewayRpcError) => void
  readonly timer: ReturnType<typeof setTimeout>
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** The engine's error object as a GatewayRpcError. */
const fromErrorShape = (error: unknown, method: string): GatewayRpcError => {
  if (!isRecord(error)) return new GatewayRpcError("UNKNOWN", `${method} failed without an error`)
  const code = typeof error["code"] === "string" ? error["code"] : "UNKNOWN"
  const message = typeof error["message"] === "string" ? error["message"] : `${method} failed`
  const retryAfterMs = typeof error["retryAfterMs"] === "number" ? error["retryAfterMs"] : undefined
  return new GatewayRpcError(code, message, error["details"], retryAfterMs)
}

const decodeFrame = (data: unknown): unknown => {
  // Text frames are strings; binary ones arrive as ArrayBuffer (binaryType below).
  const text = typeof data === "string" ? data : data instanceof ArrayBuffer ? new TextDecoder().decode(data) : undefined
  if (text === undefined) return undefined
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** Opens a connection and completes the handshake; rejects with `UNAVAILABLE` (or the engine's refusal) otherwise. */
export const connect = (options: ConnectOptions): Promise<GatewayClient> =>
  new Promise<GatewayClient>((resolveConnect, rejectConnect) => {
    const handshakeTimeoutMs = options.timeoutMs ?? 10_000
    const defaultTimeoutMs = options.requestTimeoutMs ?? 30_000
    const pending = new Map<string, Pending>()
    const listeners = new Set<EventListener>()
    let nextId = 1
    let closed = false
    let connected = false
    let hello: Record<string, unknown> = {}

    let socket: WebSocket
    // The connection's own dispatcher where `connect` opens it; closed once the socket is.
    let dispatcher: Agent | undefined
    try {
      const open = options.connect
      if (open !== undefined) {
        dispatcher = new Agent({
          connect: (_options, done) => void open().then((stream) => done(null, stream as Socket), (error: Error) => done(error, null))
        })
      }
      socket = dispatcher === undefined ? new WebSocket(options.url) : new WebSocket(options.url, { dispatcher })
    } catch (cause) {
      rejectConnect(new GatewayRpcError("UNAVAILABLE", `cannot connect to ${options.url}: ${String(cause)}`))
      return
    }
    socket.binaryType = "arraybuffer"

    const failAll = (error: GatewayRpcError) => {
      for (const [id, request] of pending) {
        pending.delete(id)
        clearTimeout(request.timer)
        request.reject(error)
      }
    }

    const shutdown = (error: GatewayRpcError) => {
      if (closed) return
      closed = true
      clearTimeout(handshakeTimer)
      failAll(error)
      for (const listener of listeners) listener(closedEvent, error)
      listeners.clear()
      if (!connected) rejectConnect(error)
      try {
        socket.close(1000, "client closed")
      } catch {
        // Already closing.
      }
    }

    const handshakeTimer = setTimeout(
      () => shutdown(new GatewayRpcError("UNAVAILABLE", `the gateway did not complete the handshake within ${handshakeTimeoutMs} ms`)),
      handshakeTimeoutMs
    )

    const send = (method: string, params: unknown, timeoutMs: number): Promise<unknown> =>
      new Promise<unknown>((resolve, reject) => {
        if (closed) {
          reject(new GatewayRpcError("CLOSED", "the gateway connection is closed"))
          return
        }
        const id = String(nextId++)
        const timer = setTimeout(() => {
          pending.delete(id)
          reject(new GatewayRpcError("TIMEOUT", `${method} got no answer within ${timeoutMs} ms`))
        }, timeoutMs)
        pending.set(id, { resolve, reject, timer })
        try {
          socket.send(JSON.stringify({ type: "req", id, method, params: params ?? {} }))
        } catch (cause) {
          pending.delete(id)
          clearTimeout(timer)
          reject(new GatewayRpcError("CLOSED", `cannot send ${method}: ${String(cause)}`))
        }
      })

    const client: GatewayClient = {
      request: (method, params, requestOptions) => send(method, params, requestOptions?.timeoutMs ?? defaultTimeoutMs),
      close: () => shutdown(new GatewayRpcError("CLOSED", "the gateway connection was closed")),
      get closed() {
        return closed
      },
      get hello() {
        return hello
      },
      onEvent: (listener) => {
        listeners.add(listener)
        return () => void listeners.delete(listener)
      }
    }

    const sendConnect = () => {
      send("connect", {
        minProtocol: protocolVersion,
        maxProtocol: protocolVersion,
        client: { id: "gateway-client", displayName: "Cairn", version: "1.0.0", platform: process.platform, mode: "backend" },
        role: "operator",
        scopes: operatorScopes,
        caps: [],
        auth: { token: options.token }
      }, handshakeTimeoutMs).then(
        (payload) => {
          if (closed) return
          if (!isRecord(payload) || payload["type"] !== "hello-ok") {
            shutdown(new GatewayRpcError("UNAVAILABLE", "the gateway answered the handshake without hello-ok"))
            return
          }
          hello = payload
          connected = true
          clearTimeout(handshakeTimer)
          resolveConnect(client)
        },
        (error: GatewayRpcError) => shutdown(error)
      )
    }

    socket.addEventListener("message", (event) => {
      const frame = decodeFrame(event.data)
      if (!isRecord(frame)) return
      if (frame["type"] === "event") {
        if (frame["event"] === "connect.challenge" && !connected) sendConnect()
        else if (connected && typeof frame["event"] === "string") {
          for (const listener of listeners) listener(frame["event"], frame["payload"])
        }
        return
      }
      if (frame["type"] !== "res" || typeof frame["id"] !== "string") return
      const request = pending.get(frame["id"])
      if (request === undefined) return // answered after its timeout
      pending.delete(frame["id"])
      clearTimeout(request.timer)
      if (frame["ok"] === true) request.resolve(frame["payload"])
      else request.reject(fromErrorShape(frame["error"], "request"))
    })
    socket.addEventListener("close", (event) => {
      void dispatcher?.close().catch(() => {})
      const reason = event.reason ? `: ${event.reason}` : ""
      shutdown(
        connected
          ? new GatewayRpcError("CLOSED", `the gateway closed the connection (${event.code}${reason})`)
          : new GatewayRpcError("UNAVAILABLE", `the gateway refused the connection (${event.code}${reason})`)
      )
    })
    // An error is followed by a close event, which reports it.
    socket.addEventListener("error", () => {})
  })
