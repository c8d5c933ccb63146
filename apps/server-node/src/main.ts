/**
 * Cairn's Node server: configuration in, layers wired, HTTP served until SIGTERM or SIGINT, when the server
 * stops accepting, in-flight requests finish and the database closes.
 * PORT (3000), HOST (0.0.0.0), DATA_DIR (./data), DATABASE_URL (unset: embedded PGlite).
 */
import { CairnHttp } from "@cairn/http"
import { CairnRuntime, Main } from "@cairn/runtime"
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { Config, Effect, Layer } from "effect"
import { HttpRouter } from "effect/http"
import { createServer } from "node:http"

const HttpServerLive = Layer.unwrap(Effect.gen(function*() {
  const port = yield* Config.Port("PORT").pipe(Config.withDefault(3000))
  const host = yield* Config.String("HOST").pipe(Config.withDefault("0.0.0.0"))
  return NodeHttpServer.layer(createServer, { port, host })
}))

const StoreLive = Layer.unwrap(Effect.map(CairnRuntime.databaseFromConfig, CairnRuntime.layerServer))

HttpRouter.serve(CairnHttp.routes).pipe(
  Layer.provide(StoreLive),
  Layer.provide(HttpServerLive),
  Layer.launch,
  Main.reportFailure,
  NodeRuntime.runMain({ teardown: Main.serverTeardown })
)
