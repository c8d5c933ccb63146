/**
 * The AgentEngine contract for agents' apps (see ContractSection.ts): `appEndpoint` says where the app an agent runs
 * on a port is reached from this node, and a server listening there answers through it. The "app" here is a real
 * HTTP server on loopback started by the test (on both engines an agent's workspace shares this machine's network;
 * the server-level test apps/server-node/test/AppDomains.int.test.ts starts one inside a real agent's sandbox). A port
 * the engine itself uses is refused, when the adapter's test names one (`ownedPort`).
 */
import { assert } from "@effect/vitest"
import { Effect } from "effect"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { AgentEngine } from "../AgentEngine.ts"
import type { SectionContext } from "./ContractSection.ts"

export interface AppsContractOptions<R> {
  /** A port the engine uses itself for this (provisioned) agent, such as its gateway's. */
  readonly ownedPort?: (agentId: string) => Effect.Effect<number, never, R>
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

const get = (host: string, port: number, path: string) =>
  Effect.promise(() =>
    new Promise<string>((resolve, reject) => {
      Http.get({ host, port, path, agent: false }, (response) => {
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
      const { port } = yield* anApp
      for (const agentId of [yield* sharedAgent, yield* aRunningAgent]) {
        const endpoint = yield* engine.appEndpoint(agentId, port)
        assert.strictEqual(endpoint.port, port)
        assert.strictEqual(yield* get(endpoint.host, endpoint.port, "/hello?x=1"), "app saw /hello?x=1")
      }
    })), timeout)

  it.effect("gives an endpoint whether or not anything listens there yet", () =>
    Effect.gen(function*() {
      const engine = yield* AgentEngine
      const agentId = yield* sharedAgent
      const endpoint = yield* engine.appEndpoint(agentId, 4321)
      assert.strictEqual(endpoint.port, 4321)
      assert.isString(endpoint.host)
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
    }), timeout)
}
