/**
 * Cairn's Node server, loaded by main.ts: configuration in, layers wired, HTTP served until SIGTERM or SIGINT, when the
 * server stops accepting, the read-model runners and agents' gateways stop and the database closes, within
 * SHUTDOWN_GRACE (a second signal stops it at once; Shutdown.ts).
 * PORT (3000), HOST (0.0.0.0), DATA_DIR (./data), DATABASE_URL (unset: embedded PGlite), ACCESS_LOG (false),
 * LOG_LEVEL (Info), LOG_FORMAT (json, or pretty on a terminal), METRICS_TOKEN, OTEL_EXPORTER_OTLP_ENDPOINT; see
 * docs/operations.md. Requests for agents' apps' domains are proxied to the apps before Cairn's
 * own handler sees them (AppRouting, docs/operations.md "Routing agents' apps"); on one of several nodes, requests
 * for agents another node runs are forwarded there first (NodeForwarding, docs/operations.md "Several nodes").
 */
import { CairnHttp } from "@cairn/http"
import { AppRouting, CairnRuntime, LingeringClose, Main, NodeForwarding, Observability, Shutdown } from "@cairn/runtime"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Config, Effect, Layer } from "effect"
import { createServer } from "node:http"

const HttpServerLive = Layer.unwrap(Effect.gen(function*() {
  const port = yield* Config.Port("PORT").pipe(Config.withDefault(3000))
  const host = yield* Config.String("HOST").pipe(Config.withDefault("0.0.0.0"))
  // Idle keep-alive connections stay open longer than a load balancer's (60 s, usually) and a client's own idle
  // timeout, so it is never the server that closes a connection a client is about to reuse. Node's default is 5 s.
  const server = Object.assign(createServer(), { keepAliveTimeout: 65_000, headersTimeout: 66_000 })
  // A refused upload's body is still read for a while, so its client sees the status, not `write EPIPE`.
  LingeringClose.attach(server)
  yield* AppRouting.attach(server)
  // Outermost: a request for an agent another node runs goes there before anything here sees it.
  yield* NodeForwarding.attach(server)
  return NodeHttpServer.layer(() => server, { port, host })
}))

const ApplicationLive = Layer.unwrap(Effect.map(CairnRuntime.databaseFromConfig, CairnRuntime.layerServer))

CairnHttp.serve(HttpServerLive).pipe(
  Layer.provide(Observability.layerMetrics),
  Layer.provide(ApplicationLive),
  // Before the application is built: a stop signal during a slow start is bounded too.
  Layer.provide(Shutdown.layer),
  Layer.provide(NodeServices.layer),
  Layer.provide(Main.layerLogLevel),
  Layer.provide(Observability.layerLogger),
  Layer.launch,
  Main.reportFailure,
  NodeRuntime.runMain({ teardown: Main.serverTeardown })
)
