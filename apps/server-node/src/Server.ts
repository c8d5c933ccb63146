/**
 * Cairn's Node server, loaded by main.ts: the server composed in CairnServer (configuration, layers, stop on
 * signals), served by Node's HTTP server. What is Node's own: requests for agents' apps' domains are proxied to the
 * apps before Cairn's own handler sees them (AppRouting, docs/operations.md "Routing agents' apps"); on one of
 * several nodes, requests for agents another node runs are forwarded there first (NodeForwarding, docs/operations.md
 * "Several nodes"); a refused upload's connection closes lingering (LingeringClose); a request that arrives while the routes are
 * still being built waits for them (EarlyRequests).
 */
import { CairnHttp } from "@cairn/http"
import { AppRouting, CairnServer, EarlyRequests, LingeringClose, NodeForwarding } from "@cairn/runtime"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Effect, Layer } from "effect"
import { createServer } from "node:http"

let routed: () => void
/** Settles once the routes are built and serve (what arrives before waits for them: EarlyRequests). */
export const ready = new Promise<void>((resolve) => (routed = resolve))

const HttpServerLive = Layer.unwrap(Effect.gen(function*() {
  const { hostname, port } = yield* CairnServer.address
  // Idle keep-alive connections stay open longer than a load balancer's (60 s, usually) and a client's own idle
  // timeout, so it is never the server that closes a connection a client is about to reuse. Node's default is 5 s.
  const server = Object.assign(createServer(), { keepAliveTimeout: 65_000, headersTimeout: 66_000 })
  // A refused upload's body is still read for a while, so its client sees the status, not `write EPIPE`.
  LingeringClose.attach(server)
  yield* AppRouting.attach(server)
  // Outermost: a request for an agent another node runs goes there before anything here sees it.
  yield* NodeForwarding.attach(server)
  // The adapter listens before the routes are built: what arrives meanwhile waits for them, through all of the above.
  EarlyRequests.attach(server)
  server.on("newListener", (event) => event === "request" && routed())
  return NodeHttpServer.layer(() => server, { port, host: hostname })
}))

CairnServer.run(CairnHttp.serve(HttpServerLive))
