/**
 * The AgentEngine contract for agents' apps (see ContractSection.ts): `appEndpoint` says where the app an agent runs
 * on a port is reached from this node, and a server listening there answers through it. The "app" is a real HTTP
 * server: by default one on this machine's loopback, started by the test (an engine whose agents share this
 * machine's network); an adapter whose agents have networks of their own starts one inside the agent (`serveApp`).
 * A port the engine itself uses is refused, when the adapter's test names one (`ownedPort`). `gatewayEndpoint` says
 * where a running agent's gateway itself is reached (the agent's own host proxies there, decision 0046).
 */
import { assert } from "@effect/vitest"
import { Effect, type Scope } from "effect"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import type { Duplex } from "node:stream"
import { AgentEngine, type AppEndpoint, connectionThrough } from "../AgentEngine.ts"
import type { SectionContext } from "./ContractSection.ts"

export interface AppsContractOptions<R> {
  /** A port the engine uses itself for this (provisioned) agent, such as its gateway's. */
  readonly ownedPort?: (agentId: string) => Effect.Effect<number, never, R>
  /**
   * Starts, inside the running agent, an app answering every request with `app saw <path>`, for as long as the scope
   * lasts; resolves with its port once it listens. By default one server on this machine's loopback serves every agent.
   */
  readonly serveApp?: (agentId: string) => Effect.Effect<number, never, R | Scope.Scope>
}

/** A real HTTP server on an ephemeral loopback port, closed when the test's scope ends. */
const anApp = Effect.acquireRelease(
  Effect.promise(() =>
    new Promise<{ server: Http.Server; port: number }>((resolve) => {
      const server = Http.createServer((request, response) => response.end(`app saw ${request.url}`))
      server.listen(0, "127.0.0.1", () => resolve({ server, port: (server.address() as AddressInfo).port }))
    })
  ),
  ({ server }) => Effect.promise(() => new Promise<void>((resolve) => {
    server.closeAllConnections()
    server.close(() => resolve())
  }))
)

/** The status of a GET through the endpoint. */
const statusOf = (endpoint: AppEndpoint, path: string) =>
  Effect.promise(() =>
    new Promise<number>((resolve, reject) => {
      const address = "connect" in endpoint
        ? { createConnection: connectionThrough(endpoint.connect as () => Promise<Duplex>) }
        : { host: endpoint.host, port: endpoint.port, agent: false }
      Http.get({ ...address, path }, (response) => {
        response.resume()
        response.on("end", () => resolve(response.statusCode ?? 0))
      }).on("error", reject)
    })
  )

const get = (endpoint: AppEndpoint, path: string) =>
  Effect.promise(() =>
    new Promise<string>((resolve, reject) => {
      const address = "connect" in endpoint
        ? { createConnection: connectionThrough(endpoint.connect as () => Promise<Duplex>) }
        : { host: endpoint.host, port: endpoint.port, agent: false }
      Http.get({ ...address, path }, (response) => {
        let body = ""
        response.on("data", (chunk: Buffer) => (body += chunk.toString()))
        response.on("end", () => resolve(body))
      }).on("error", reject)
    })
  )

export const appsContract = <R>(
  { it, sharedAgent, aRunningAgent, timeout }: SectionContext<R>,
  options: AppsContractOptions<R> = {}
): void => {
  it.effect("gives the endpoint of an agent's app on a port, where a server listening on it answers", () =>
    Effect.scoped(Effect.gen(function*() {
      const engine = yield* AgentEngine
      const shared = options.serveApp === undefined ? (yield* anApp).port : undefined
      // Where agents have networks of their own, a stopped agent has no app to reach (AppNotRunning).
      const agents = options.serveApp === undefined ? [yield* sharedAgent, yield* aRunningAgent] : [yield* aRunningAgent]
      for (const agentId of agents) {
        const port = shared ?? (yield* options.serveApp!(agentId))
        const endpoint = yield* engine.appEndpoint(agentId, port)
        if ("port" in endpoint) assert.strictEqual(endpoint.port, port)
        assert.strictEqual(yield* get(endpoint, "/hello?x=1"), "app saw /hello?x=1")
      }
    })), timeout)

  it.effect("gives an endpoint whether or not anything listens there yet", () =>
    Effect.gen(function*() {
      const engine = yield* AgentEngine
      // Running: where agents have networks of their own, a stopped agent's apps are not there (AppNotRunning).
      const agentId = yield* aRunningAgent
      const endpoint = yield* engine.appEndpoint(agentId, 4321)
      if ("port" in endpoint) {
        assert.strictEqual(endpoint.port, 4321)
        assert.isString(endpoint.host)
      } else assert.isFunction(endpoint.connect)
    }), timeout)

  if (options.ownedPort !== undefined) {
    const ownedPort = options.ownedPort
    it.effect("refuses a port the engine uses itself", () =>
      Effect.gen(function*() {
        const engine = yield* AgentEngine
        const agentId = yield* aRunningAgent
        const port = yield* ownedPort(agentId)
        assert.deepInclude(yield* Effect.flip(engine.appEndpoint(agentId, port)), { _tag: "AppPortReserved", agentId, port })
      }), timeout)
  }

  it.effect("knows no agent that was never provisioned", () =>
    Effect.gen(function*() {
      const engine = yield* AgentEngine
      const agentId = `never-provisioned-app-${Date.now().toString(36)}`
      assert.deepInclude(yield* Effect.flip(engine.appEndpoint(agentId, 4321)), { _tag: "AgentNotProvisioned", agentId })
      assert.deepInclude(yield* Effect.flip(engine.gatewayEndpoint(agentId)), { _tag: "AgentNotProvisioned", agentId })
    }), timeout)

  it.effect("gives the endpoint of a running agent's gateway, where the gateway answers HTTP", () =>
    Effect.gen(function*() {
      const engine = yield* AgentEngine
      const agentId = yield* aRunningAgent
      const endpoint = yield* engine.gatewayEndpoint(agentId)
      assert.strictEqual(yield* statusOf(endpoint, "/readyz"), 200)
    }), timeout)

  it.effect("has no gateway endpoint while the agent's gateway is not running", () =>
    Effect.gen(function*() {
      const engine = yield* AgentEngine
      const agentId = yield* sharedAgent
      assert.deepInclude(yield* Effect.flip(engine.gatewayEndpoint(agentId)), { _tag: "AppNotRunning", agentId })
    }), timeout)
}
