/**
 * Agents' apps on their domains: requests to a Node HTTP server whose `Host` is an active domain are reverse-proxied
 * to the app of the agent that owns it (HTTP with bodies streamed both ways, and WebSocket upgrades); every other
 * request goes on to the server's own listeners (Cairn's API) untouched. `attach` puts itself in front of the
 * server's `request`, `checkContinue` and `upgrade` events; the routing it asks (`AppRouting`) is plain promises, so
 * this package knows nothing of Cairn's services (the runtime's AppRouting.ts wires them).
 *
 * - A host is looked up once and remembered for a short time (RouteCache.ts): a request to one of Cairn's own hosts
 *   costs a Map lookup.
 * - A host only apps use (`isAppHost`, the apps domain's subdomains) without an active domain: 404
 *   `{"error":"Domain not found"}`.
 * - `protected` routes need the agent's current gateway token: `Authorization: Bearer gw_…`, `?token=` or the
 *   `gw_token` cookie, else 401 `{"error":"Unauthorized"}`. A token given as `?token=` is set as the `gw_token`
 *   cookie (HttpOnly, SameSite=Lax, Secure when the request came over TLS), and whichever way it came, it is taken
 *   out of what goes to the app.
 * - The app not listening (or not reachable from this node): 502 `{"error":"Bad gateway"}`.
 * - The app gets the request's own Host, and `X-Forwarded-For` (the client's address appended), `X-Forwarded-Proto`
 *   and `X-Forwarded-Host`. `Expect: 100-continue` is answered here (as nginx does), not passed on.
 * - Each agent's own host (`agentHost`, decision 0046: `<agentId>.<AGENTS_DOMAIN>`) is the agent's gateway: paths under
 *   `/v0/` go on to Cairn's own routes (the agent's `/v0/agents/{agentId}/…`, as on Pinata's per-agent host), and
 *   everything else is proxied to the gateway itself (its Control UI, WebSocket, OpenAI-compatible endpoints) once
 *   the caller is admitted (`admit`: the gateway token as above, or an API key). What goes to the gateway carries the
 *   agent's gateway token as `Authorization: Bearer`, never the caller's credential. A token given as `?token=` on a
 *   GET is set as the cookie and the browser sent to the same URL without it (302), so it stays out of history and
 *   logs.
 * - A domain for the agent's gateway (`gateway`: added without a port) is served as the agent's own host is.
 * - Every request it sends carries this proxy's hop marker (`X-Cairn-Hop`, random per proxy): a request that comes
 *   back with it has gone round through this server (a domain whose `targetPort` is Cairn's own port, or an app
 *   that calls its own domain), and is refused at once, 508 `{"error":"Loop detected"}`, instead of looping until a
 *   header grows too large.
 */
import * as Http from "node:http"
import type { Socket } from "node:net"
import type { Duplex } from "node:stream"
import { pipeline } from "node:stream"
import { Pool } from "undici"
import { type Known, RouteCache } from "./RouteCache.ts"

/** An active domain's route: the agent whose app serves it, on which port, and whether it needs the gateway token. */
export interface AppRoute {
  readonly agentId: string
  readonly targetPort: number
  readonly protected: boolean
  /** The domain is for the agent's gateway itself (added without a port): served as the agent's own host is. */
  readonly gateway?: boolean
}

/**
 * A TCP address, or a way to open connections (an app in an agent's own network: the engine's connector). The same
 * object stands for the same app while it lasts: the proxy keeps connections through it open between requests.
 */
export type AppEndpoint =
  | { readonly host: string; readonly port: number }
  | { readonly connect: () => Promise<NodeJS.ReadWriteStream> }

const describe = (target: AppEndpoint) => "connect" in target ? "its own network" : `${target.host}:${target.port}`

/** An `http.request` `createConnection` (its callback form) opening the connection with `connect`. */
const connectionThrough = (connect: () => Promise<NodeJS.ReadWriteStream>) =>
  (_options: unknown, done: (error: Error | null, socket: Duplex) => void): undefined => {
    connect().then((socket) => done(null, socket as Duplex), (error: Error) => done(error, undefined as never))
    return undefined
  }

/** What a caller presented on an agent's host: a gateway token (bearer, `?token=`, cookie), or another bearer token. */
export interface AgentHostCredential {
  readonly gatewayToken?: string
  readonly bearer?: string
  /** Only the `gw_token` cookie came, on a request another origin's page made: not taken. */
  readonly crossOriginCookie?: boolean
}

/** A refusal the routing chose: its status, JSON body and headers. */
export interface Refusal {
  readonly status: number
  readonly body: Readonly<Record<string, unknown>>
  readonly headers?: Readonly<Record<string, string>>
}

/** Each agent's own host (decision 0046). */
export interface AgentHostRouting {
  /** The agent whose own host `host` is (lowercase, without port), or undefined: synchronous, a test of the name. */
  readonly agentOf: (host: string) => string | undefined
  /** Whether the caller may reach the agent's gateway: if so, the token to present to the gateway. */
  readonly admit: (agentId: string, credential: AgentHostCredential) => Promise<
    { readonly admitted: true; readonly gatewayToken: string } | ({ readonly admitted: false } & Refusal)
  >
  /** Where the agent's running gateway is reached from this node, or why it cannot be (not running, starting). */
  readonly gateway: (agentId: string) => Promise<{ readonly endpoint: AppEndpoint } | ({ readonly endpoint?: undefined } & Refusal)>
}

/** A host as an origin names it: lowercase, without the default ports. */
const originHost = (host: string) => host.toLowerCase().replace(/:(?:80|443)$/, "")

/**
 * Whether a browser says another page made the request: an `Origin` (sent on every cross-origin request and on
 * WebSocket upgrades) that is not the request's own host, or a `Sec-Fetch-Site` other than same-origin on anything
 * but a top-level navigation.
 */
const fromElsewhere = (request: Http.IncomingMessage) => {
  const origin = request.headers.origin
  if (origin !== undefined) {
    try {
      if (originHost(new URL(origin).host) !== originHost(request.headers.host ?? "")) return true
    } catch {
      return true
    }
  }
  const site = request.headers["sec-fetch-site"]
  return (site === "cross-site" || site === "same-site") && request.headers["sec-fetch-mode"] !== "navigate"
}

/** Whether the request's only credential is the `gw_token` cookie: no Authorization, no `token` query parameter. */
const cookieOnly = (request: Http.IncomingMessage) =>
  request.headers.authorization === undefined && /(?:^|;\s*)gw_token=/.test(request.headers.cookie ?? "") &&
  !/[?&]token=/.test(request.url ?? "")

/** Whether an address is this machine's loopback (127.0.0.0/8, ::1, or either mapped). */
const isLoopback = (address: string) => /^(?:::ffff:)?127\.\d+\.\d+\.\d+$/i.test(address) || address === "::1"

/** Paths of an agent's host that are Cairn's own: `/v0` and everything under it. */
export const isApiPath = (url: string | undefined) => /^\/v0(?:[/?#]|$)/.test(url ?? "/")

export interface AppRouting {
  /** The route of an active domain for `host` (lowercase, without port or trailing dot), or undefined. */
  readonly route: (host: string) => Promise<AppRoute | undefined>
  /** Whether `token` is the agent's current gateway token. */
  readonly authorize: (agentId: string, token: string) => Promise<boolean>
  /** Where the agent's app listening on `port` is reached from this node; a rejection answers 502. */
  readonly endpoint: (agentId: string, port: number) => Promise<AppEndpoint>
  /** Hosts only apps have (the apps domain's subdomains): without an active domain, 404 rather than Cairn's API. */
  readonly isAppHost?: (host: string) => boolean
  /** Each agent's own host, proxied to its gateway; none without it. */
  readonly agentHost?: AgentHostRouting
  /**
   * A proxied request or WebSocket to the agent opened: the function returned is called once it closes (an agent
   * with a connection open does not sleep).
   */
  readonly connected?: (agentId: string) => () => void
}

export interface ProxyOptions {
  /** How long a host's route is used as it is (2 s); see RouteCache.ts. */
  readonly cacheTtlMs?: number
  /** How long an older route is still used while it is looked up again (60 s). */
  readonly cacheStaleMs?: number
  readonly cacheMaxEntries?: number
  /** Failures worth a log line (a lookup that failed, an app that could not be reached). */
  readonly onError?: (message: string, error: unknown) => void
}

export interface AttachedProxy {
  /** Forgets what the cache knows of a host (all hosts without one): its next request looks it up. */
  readonly invalidate: (host?: string) => void
  /** Gives the server's events back to its own listeners alone. */
  readonly detach: () => void
}

const hopByHop = new Set([
  "connection", "keep-alive", "proxy-connection", "proxy-authenticate", "proxy-authorization", "te", "trailer",
  "transfer-encoding", "upgrade", "http2-settings"
])

/**
 * Which of a message's headers a proxy passes on (lowercase names): none of the hop-by-hop ones, nor those its own
 * `Connection` header names.
 */
export const endToEnd = (headers: Http.IncomingHttpHeaders) => {
  const named = new Set(String(headers.connection ?? "").split(",").map((name) => name.trim().toLowerCase()))
  return (name: string) => !hopByHop.has(name) && !named.has(name)
}

/** A message's end-to-end headers, as an outgoing message's. */
export const endToEndHeaders = (incoming: Http.IncomingHttpHeaders): Http.OutgoingHttpHeaders => {
  const passes = endToEnd(incoming)
  const headers: Http.OutgoingHttpHeaders = {}
  for (const [name, value] of Object.entries(incoming)) {
    if (value !== undefined && passes(name)) headers[name] = value
  }
  return headers
}

/** The request's host as routes name it: lowercase, without its port or a trailing dot; undefined without one. */
export const hostOf = (request: Http.IncomingMessage): string | undefined => {
  const header = request.headers.host
  if (header === undefined || header === "") return undefined
  let host = header.toLowerCase()
  if (host.startsWith("[")) {
    const end = host.indexOf("]")
    host = end === -1 ? host : host.slice(0, end + 1)
  } else {
    const colon = host.indexOf(":")
    if (colon !== -1) host = host.slice(0, colon)
  }
  return host.endsWith(".") ? host.slice(0, -1) : host
}

const isTls = (request: Http.IncomingMessage) => (request.socket as Socket & { encrypted?: boolean }).encrypted === true

/** `https` when the request came over TLS, here or (X-Forwarded-Proto) at the proxy in front of Cairn. */
const protoOf = (request: Http.IncomingMessage): "http" | "https" => {
  if (isTls(request)) return "https"
  const forwarded = request.headers["x-forwarded-proto"]
  const first = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(",")[0]?.trim().toLowerCase()
  return first === "https" ? "https" : "http"
}

const decode = (text: string) => {
  try {
    return decodeURIComponent(text.replace(/\+/g, " "))
  } catch {
    return text
  }
}

/** The path with its `token` query parameters taken out (the rest left byte for byte), and the first token. */
const withoutQueryToken = (url: string): { readonly path: string; readonly token: string | undefined } => {
  const mark = url.indexOf("?")
  if (mark === -1) return { path: url, token: undefined }
  let token: string | undefined
  const kept = url.slice(mark + 1).split("&").filter((part) => {
    const eq = part.indexOf("=")
    if (decode(eq === -1 ? part : part.slice(0, eq)) !== "token") return true
    token ??= decode(eq === -1 ? "" : part.slice(eq + 1))
    return false
  })
  return { path: kept.length === 0 ? url.slice(0, mark) : `${url.slice(0, mark)}?${kept.join("&")}`, token }
}

/** The Cookie header without `gw_token`, and its value. */
const withoutCookieToken = (cookie: string | undefined): { readonly cookie: string | undefined; readonly token: string | undefined } => {
  if (cookie === undefined) return { cookie, token: undefined }
  let token: string | undefined
  const kept = cookie.split(";").map((part) => part.trim()).filter((part) => {
    if (!part.startsWith("gw_token=")) return part !== ""
    token ??= decode(part.slice("gw_token=".length))
    return false
  })
  return { cookie: kept.length === 0 ? undefined : kept.join("; "), token }
}

const bearerGatewayToken = (authorization: string | undefined) => {
  const match = /^Bearer\s+(gw_\S+)\s*$/i.exec(authorization ?? "")
  return match?.[1]
}

/** Where a request goes upstream: its path and headers, gateway tokens taken out on a protected route. */
interface Outgoing {
  readonly path: string
  readonly headers: Http.OutgoingHttpHeaders
  /** The token presented, if any (checked by the caller). */
  readonly token: string | undefined
  /** The token came as `?token=`: the response sets it as the cookie. */
  readonly fromQuery: boolean
}

const outgoing = (request: Http.IncomingMessage, route: AppRoute, upgrade: boolean): Outgoing => {
  // An absolute-form request target (`GET http://host/path`) goes upstream as a path.
  let url = request.url ?? "/"
  if (!url.startsWith("/")) {
    try {
      const parsed = new URL(url)
      url = `${parsed.pathname}${parsed.search}`
    } catch {
      url = "/"
    }
  }
  // The forwarding headers are set below, from what this proxy saw.
  const headers = endToEndHeaders(request.headers)
  delete headers["x-forwarded-for"]
  delete headers["x-forwarded-proto"]
  delete headers["x-forwarded-host"]
  let token: string | undefined
  let fromQuery = false
  let path = url
  if (route.protected) {
    const bearer = bearerGatewayToken(request.headers.authorization)
    if (bearer !== undefined) delete headers["authorization"]
    const query = withoutQueryToken(url)
    path = query.path
    const cookie = withoutCookieToken(request.headers.cookie)
    if (cookie.cookie === undefined) delete headers["cookie"]
    else headers["cookie"] = cookie.cookie
    token = bearer ?? query.token ?? cookie.token
    fromQuery = bearer === undefined && query.token !== undefined
  }
  const previous = request.headers["x-forwarded-for"]
  const client = request.socket.remoteAddress ?? ""
  headers["x-forwarded-for"] = previous === undefined || previous === "" ? client : `${previous}, ${client}`
  headers["x-forwarded-proto"] = protoOf(request)
  headers["x-forwarded-host"] = request.headers.host ?? ""
  if (upgrade) {
    headers["connection"] = "Upgrade"
    headers["upgrade"] = request.headers.upgrade ?? "websocket"
  }
  return { path, headers, token, fromQuery }
}

const tokenCookie = (token: string, request: Http.IncomingMessage) =>
  `gw_token=${encodeURIComponent(token)}; Path=/; HttpOnly; SameSite=Lax${protoOf(request) === "https" ? "; Secure" : ""}`

/** The header a proxied request carries, naming the proxy that sent it. */
export const hopHeader = "x-cairn-hop"

/** Whether the request carries `marker` among its hop markers: it has been through that proxy already. */
const hasHop = (request: Http.IncomingMessage, marker: string) => {
  const value = request.headers[hopHeader]
  return value !== undefined && (Array.isArray(value) ? value.join(",") : value).split(",").some((hop) => hop.trim() === marker)
}

export const answer = (response: Http.ServerResponse, status: number, error: string) =>
  refuse(response, { status, body: { error } })

/** An error answer written straight to an upgrade's socket (no ServerResponse there). */
export const answerSocket = (socket: Duplex, status: number, error: string) => refuseSocket(socket, { status, body: { error } })

/** A refusal as a JSON response. */
export const refuse = (response: Http.ServerResponse, refusal: Refusal) => {
  if (response.headersSent) {
    response.destroy()
    return
  }
  const body = JSON.stringify(refusal.body)
  response.writeHead(refusal.status, {
    ...refusal.headers,
    "content-type": "application/json",
    "content-length": Buffer.byteLength(body)
  })
  response.end(body)
}

/** A refusal written straight to an upgrade's socket. */
export const refuseSocket = (socket: Duplex, refusal: Refusal) => {
  if (socket.destroyed) return
  const body = JSON.stringify(refusal.body)
  const headers = Object.entries(refusal.headers ?? {}).map(([name, value]) => `${name}: ${value}\r\n`).join("")
  socket.end(
    `HTTP/1.1 ${refusal.status} ${Http.STATUS_CODES[refusal.status]}\r\n${headers}content-type: application/json\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`
  )
}

/** Response headers as a raw head: the status line and every header as the app sent it, hop-by-hop ones left out. */
export const rawHead = (status: number, message: string, rawHeaders: ReadonlyArray<string>, keep: (name: string) => boolean, extra: ReadonlyArray<string>) => {
  const lines = [`HTTP/1.1 ${status} ${message}`]
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    if (keep(rawHeaders[i]!.toLowerCase())) lines.push(`${rawHeaders[i]}: ${rawHeaders[i + 1]}`)
  }
  lines.push(...extra)
  return `${lines.join("\r\n")}\r\n\r\n`
}

export const attach = (server: Http.Server, routing: AppRouting, options: ProxyOptions = {}): AttachedProxy => {
  const onError = options.onError ?? (() => undefined)
  const cache = new RouteCache<AppRoute>(routing.route, {
    ttlMs: options.cacheTtlMs ?? 2_000,
    staleMs: options.cacheStaleMs ?? 60_000,
    maxEntries: options.cacheMaxEntries ?? 10_000
  })
  /**
   * Connections to apps and gateways, kept open between requests (5 s idle), by address, or by endpoint for those in
   * an agent's network (gone with it). undici's pools: about 1.35× the requests per second of `http.request` through an
   * `http.Agent` (bench:proxy). No time limits: an app may take its time to answer, and a stream may pause.
   */
  const poolOptions = { keepAliveTimeout: 5_000, headersTimeout: 0, bodyTimeout: 0 }
  const addressPools = new Map<string, Pool>()
  const networkPools = new WeakMap<AppEndpoint, Pool>()
  const poolOf = (target: AppEndpoint): Pool => {
    if ("connect" in target) {
      let pool = networkPools.get(target)
      if (pool === undefined) {
        pool = new Pool("http://agent.invalid", {
          ...poolOptions,
          connect: (_options, done) => {
            target.connect().then((socket) => done(null, socket as Socket), (error: Error) => done(error, null))
          }
        })
        networkPools.set(target, pool)
      }
      return pool
    }
    const origin = `http://${target.host.includes(":") ? `[${target.host}]` : target.host}:${target.port}`
    let pool = addressPools.get(origin)
    if (pool === undefined) addressPools.set(origin, pool = new Pool(origin, poolOptions))
    return pool
  }
  // Random, so that no client or app can name it; marks what this proxy sent on.
  const marker = crypto.randomUUID()

  /** Whether the request may go on: no token needed, or the agent's current gateway token presented. */
  const admitted = async (route: AppRoute, token: string | undefined) =>
    !route.protected || (token !== undefined && token.startsWith("gw_") && (await routing.authorize(route.agentId, token)))

  /** Requests that came as `checkContinue`: Node left their `100 Continue` to the listener. */
  const waitingToContinue = new WeakSet<Http.IncomingMessage>()

  /** The headers `outgoing` made, with this proxy's hop marker added. */
  const marked = (headers: Http.OutgoingHttpHeaders): Http.OutgoingHttpHeaders => {
    const previous = headers[hopHeader]
    return { ...headers, [hopHeader]: previous === undefined ? marker : `${String(previous)}, ${marker}` }
  }

  /** An upgrade's own request to the app (never from, nor back into, a pool): the client's method, path and headers. */
  const upgradeTo = (target: AppEndpoint, request: Http.IncomingMessage, out: Outgoing) => {
    const address = "connect" in target ? { createConnection: connectionThrough(target.connect) } : { host: target.host, port: target.port, agent: false }
    return Http.request({ ...address, method: request.method ?? "GET", path: out.path, headers: marked(out.headers) })
  }

  /** Where the route's app is reached; undefined (logged) when the engine cannot say (a reserved port, another node). */
  const endpointOf = (route: AppRoute) =>
    routing.endpoint(route.agentId, route.targetPort).catch((error: unknown) => {
      onError(`App of agent ${route.agentId} (port ${route.targetPort}) has no endpoint`, error)
      return undefined
    })

  const proxyRequest = async (request: Http.IncomingMessage, response: Http.ServerResponse, route: AppRoute) => {
    const out = outgoing(request, route, false)
    if (!(await admitted(route, out.token))) return answer(response, 401, "Unauthorized")
    const target = await endpointOf(route)
    if (target === undefined) return answer(response, 502, "Bad gateway")
    forward(request, response, target, out, route.agentId, `App of agent ${route.agentId}`)
  }

  /**
   * Sends the request on to `target` as `out` says and relays the answer (`label` names the target in logs), both
   * bodies streamed with backpressure. `Expect: 100-continue` is answered here, as nginx does: the body then goes on.
   */
  const forward = (request: Http.IncomingMessage, response: Http.ServerResponse, target: AppEndpoint, out: Outgoing, agentId: string, label: string) => {
    if (response.destroyed) return
    if (routing.connected !== undefined) response.once("close", routing.connected(agentId))
    const headers = marked(out.headers)
    if (headers["expect"] !== undefined) {
      delete headers["expect"]
      // Node answered it already unless the server asked (a `checkContinue` listener of its own).
      if (waitingToContinue.has(request)) response.writeContinue()
    }
    // Made now: the request may have let go of its socket by the time the answer comes.
    const cookie = out.fromQuery && out.token !== undefined ? tokenCookie(out.token, request) : undefined
    const body = request.headers["content-length"] !== undefined || request.headers["transfer-encoding"] !== undefined ? request : null
    request.on("error", () => response.destroy())
    poolOf(target).dispatch({ path: out.path, method: request.method ?? "GET", headers: headers as Record<string, string | Array<string>>, body }, {
      onRequestStart: (controller) => {
        response.on("close", () => {
          if (!response.writableFinished) controller.abort(new Error("the client went away"))
        })
        response.on("drain", () => controller.resume())
      },
      onResponseStart: (_controller, status, incoming, message) => {
        const passed = endToEndHeaders(incoming as Http.IncomingHttpHeaders)
        if (cookie !== undefined) {
          const set = passed["set-cookie"]
          passed["set-cookie"] = [...(Array.isArray(set) ? set : set === undefined ? [] : [String(set)]), cookie]
        }
        response.writeHead(status, message ?? "", passed)
        // A response of unknown length (server-sent events, a stream) gets its headers at once, so that it starts
        // while the app is still writing; one of known length sends them with its first bytes: one write, not two
        // (measured: a third more requests per second for small responses).
        if (incoming["content-length"] === undefined) response.flushHeaders()
      },
      onResponseData: (controller, chunk) => {
        if (!response.write(chunk)) controller.pause()
      },
      onResponseEnd: () => response.end(),
      onResponseError: (_controller, error) => {
        if (response.headersSent) return response.destroy()
        if (response.destroyed) return
        onError(`${label} on ${describe(target)} did not answer`, error)
        answer(response, 502, "Bad gateway")
      }
    })
  }

  const proxyUpgrade = async (request: Http.IncomingMessage, socket: Duplex, head: Buffer, route: AppRoute) => {
    socket.on("error", () => socket.destroy())
    const out = outgoing(request, route, true)
    if (!(await admitted(route, out.token))) return answerSocket(socket, 401, "Unauthorized")
    const target = await endpointOf(route)
    if (target === undefined) return answerSocket(socket, 502, "Bad gateway")
    forwardUpgrade(request, socket, head, target, out, route.agentId, `App of agent ${route.agentId}`)
  }

  const forwardUpgrade = (
    request: Http.IncomingMessage,
    socket: Duplex,
    head: Buffer,
    target: AppEndpoint,
    out: Outgoing,
    agentId: string,
    label: string
  ) => {
    if (socket.destroyed) return
    if (routing.connected !== undefined) socket.once("close", routing.connected(agentId))
    // An upgraded connection is the client's alone: never from, nor back into, the kept-open pool.
    relayUpgrade(socket, head, upgradeTo(target, request, out), {
      switchHeaders: out.fromQuery && out.token !== undefined ? [`Set-Cookie: ${tokenCookie(out.token, request)}`] : [],
      onNoAnswer: (error) => {
        onError(`${label} on ${describe(target)} did not answer`, error)
        answerSocket(socket, 502, "Bad gateway")
      }
    })
  }

  /**
   * A request (or upgrade) for an agent's own host, not for Cairn's API: the caller admitted, a `?token=` on a GET
   * turned into the cookie and a redirect, then the request sent to the agent's gateway with the gateway's token.
   */
  const serveAgentHost = async (hosts: AgentHostRouting, agentId: string, request: Http.IncomingMessage, args: Array<any>, upgrade: boolean) => {
    const fail = (refusal: Refusal) => upgrade ? refuseSocket(args[1] as Duplex, refusal) : refuse(args[1] as Http.ServerResponse, refusal)
    if (upgrade) (args[1] as Duplex).on("error", () => (args[1] as Duplex).destroy())
    // Gateway tokens are taken out of what goes on whichever way they came (as on a protected app's domain).
    const out = outgoing(request, { agentId, targetPort: 0, protected: true }, upgrade)
    // The cookie is an ambient credential: a request another site's page makes (another agent's app on a sibling
    // domain is same-site) may not use it, as only this host's own pages may (a bearer or `?token=` is explicit).
    const fromCookie = out.token !== undefined && !out.fromQuery && bearerGatewayToken(request.headers.authorization) === undefined
    const crossOriginCookie = fromCookie && fromElsewhere(request)
    const gatewayToken = crossOriginCookie ? undefined : out.token
    const header = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? "")?.[1]
    const bearer = gatewayToken === undefined && header !== undefined && !header.startsWith("gw_") ? header : undefined
    const admission = await hosts.admit(agentId, {
      ...(gatewayToken === undefined ? {} : { gatewayToken }),
      ...(bearer === undefined ? {} : { bearer }),
      ...(crossOriginCookie ? { crossOriginCookie: true } : {})
    })
    if (!admission.admitted) return fail(admission)
    if (out.fromQuery && out.token !== undefined && !upgrade && (request.method === "GET" || request.method === "HEAD")) {
      const response = args[1] as Http.ServerResponse
      response.writeHead(302, {
        location: out.path,
        "set-cookie": tokenCookie(out.token, request),
        "cache-control": "no-store",
        "referrer-policy": "no-referrer",
        "content-length": 0
      })
      response.end()
      request.resume()
      return
    }
    const reach = await hosts.gateway(agentId)
    if (reach.endpoint === undefined) return fail(reach)
    // The gateway's own auth sees its token, never the caller's credential (an API key is Cairn's alone).
    const headers: Http.OutgoingHttpHeaders = { ...out.headers, authorization: `Bearer ${admission.gatewayToken}` }
    // A client on this machine (every hop loopback) reaches the gateway as a local client does: OpenClaw refuses a
    // trusted proxy's request for a loopback client ("proxy_attribution_required"), as it cannot tell it from one.
    if (String(headers["x-forwarded-for"]).split(",").every((hop) => isLoopback(hop.trim()))) {
      for (const name of Object.keys(headers)) {
        if (name === "forwarded" || name === "x-real-ip" || name.startsWith("x-forwarded-")) delete headers[name]
      }
    }
    const sent: Outgoing = { ...out, headers }
    const label = `Gateway of agent ${agentId}`
    if (upgrade) forwardUpgrade(request, args[1] as Duplex, args[2] as Buffer, reach.endpoint, sent, agentId, label)
    else forward(request, args[1] as Http.ServerResponse, reach.endpoint, sent, agentId, label)
  }

  const failed = (host: string, error: unknown) => onError(`Route lookup for ${host} failed`, error)

  const originalEmit = server.emit as (this: Http.Server, event: string | symbol, ...args: Array<any>) => boolean
  const emit = function(this: Http.Server, event: string | symbol, ...args: Array<any>): boolean {
    if (event !== "request" && event !== "checkContinue" && event !== "upgrade") return originalEmit.call(this, event, ...args)
    const request = args[0] as Http.IncomingMessage
    if (event === "checkContinue") waitingToContinue.add(request)
    /** Answers the request, or the upgrade's socket, with `refusal`. */
    const reply = (refusal: Refusal) =>
      event === "upgrade" ? refuseSocket(args[1] as Duplex, refusal) : refuse(args[1] as Http.ServerResponse, refusal)
    const fail = (status: number, error: string) => reply({ status, body: { error } })
    if (hasHop(request, marker)) {
      fail(508, "Loop detected")
      return true
    }
    const host = hostOf(request)
    if (host === undefined) return originalEmit.call(this, event, ...args)
    const hosts = routing.agentHost
    const agentId = hosts?.agentOf(host)
    /**
     * Cairn's own routes on an agent's host (its `/v0/agents/{agentId}/…` take the `gw_token` cookie too): the cookie
     * alone, on a request another site's page made, is refused here as on the gateway's paths.
     */
    const api = (agentHosts: AgentHostRouting, agentId: string) => {
      if (!(cookieOnly(request) && fromElsewhere(request))) return originalEmit.call(this, event, ...args)
      agentHosts.admit(agentId, { crossOriginCookie: true }).then(
        (refusal) => reply(refusal.admitted ? { status: 401, body: { error: "Unauthorized" } } : refusal),
        () => fail(503, "Service unavailable")
      )
      return true
    }
    /** The agent's gateway, on its own host or a domain for it: `/v0` is Cairn's, the rest the gateway's. */
    const agentHost = (agentHosts: AgentHostRouting, agentId: string) => {
      // The agent's own routes are Cairn's, on its host as on Cairn's.
      if (isApiPath(request.url)) return api(agentHosts, agentId)
      serveAgentHost(agentHosts, agentId, request, args, event === "upgrade").catch((error: unknown) => {
        onError(`Proxying to the gateway of agent ${agentId} failed`, error)
        fail(502, "Bad gateway")
      })
      return true
    }
    if (hosts !== undefined && agentId !== undefined) return agentHost(hosts, agentId)
    const known: Known<AppRoute> = cache.peek(host)
    const serve = (route: AppRoute) => {
      if (route.gateway === true && hosts !== undefined) return agentHost(hosts, route.agentId)
      const done = event === "upgrade"
        ? proxyUpgrade(request, args[1] as Duplex, args[2] as Buffer, route)
        : proxyRequest(request, args[1] as Http.ServerResponse, route)
      done.catch((error: unknown) => {
        onError(`Proxying to the app of agent ${route.agentId} failed`, error)
        fail(502, "Bad gateway")
      })
      return true
    }
    const notFound = () => {
      fail(404, "Domain not found")
      return true
    }
    const otherwise = () => routing.isAppHost?.(host) === true ? notFound() : originalEmit.call(this, event, ...args)
    if (known === null) return otherwise()
    if (known !== undefined) return serve(known)
    cache.load(host).then(
      (route) => route === undefined ? otherwise() : serve(route),
      (error: unknown) => {
        failed(host, error)
        // Cairn's own hosts are served whatever happened to the lookup; an app's host cannot be.
        if (routing.isAppHost?.(host) !== true) return originalEmit.call(this, event, ...args)
        fail(503, "Service unavailable")
        return true
      }
    )
    return true
  }
  server.emit = emit as typeof server.emit

  return {
    invalidate: (host) => cache.invalidate(host),
    detach: () => {
      if (server.emit === emit) server.emit = originalEmit as typeof server.emit
      for (const pool of addressPools.values()) void pool.destroy()
      addressPools.clear()
    }
  }
}

/**
 * Splices a client's upgrade `socket` with the `upstream` request made for it: on 101 the two connections are piped
 * byte for byte (`switchHeaders` added to the client's 101); an upstream that answers without switching protocols
 * (a 401, a 404) is relayed, delimited by closing the connection; one that does not answer at all is `onNoAnswer`'s.
 */
export const relayUpgrade = (
  socket: Duplex,
  head: Buffer,
  upstream: Http.ClientRequest,
  options: { readonly switchHeaders?: ReadonlyArray<string>; readonly onNoAnswer: (error: Error) => void }
) => {
  let answered = false
  socket.once("close", () => {
    if (!answered) upstream.destroy()
  })
  upstream.on("upgrade", (incoming, upSocket, upHead) => {
    answered = true
    upSocket.on("error", () => socket.destroy())
    socket.write(rawHead(101, incoming.statusMessage ?? "Switching Protocols", incoming.rawHeaders, () => true, options.switchHeaders ?? []))
    if (upHead.length > 0) socket.write(upHead)
    if (head.length > 0) upSocket.write(head)
    for (const side of [socket, upSocket]) {
      ;(side as Socket).setNoDelay?.(true)
      ;(side as Socket).setTimeout?.(0)
    }
    upSocket.pipe(socket)
    socket.pipe(upSocket)
    upSocket.on("close", () => socket.destroy())
    socket.on("close", () => upSocket.destroy())
  })
  upstream.on("response", (incoming) => {
    answered = true
    const passes = endToEnd(incoming.headers)
    socket.write(rawHead(
      incoming.statusCode ?? 502,
      incoming.statusMessage ?? "",
      incoming.rawHeaders,
      (name) => passes(name) && name !== "content-length",
      ["connection: close"]
    ))
    pipeline(incoming, socket, () => undefined)
  })
  upstream.on("error", (error) => {
    if (answered) return socket.destroy()
    answered = true
    options.onNoAnswer(error)
  })
  upstream.end()
}
