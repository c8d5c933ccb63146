/**
 * Cairn on a runtime that serves web requests itself (Bun's `Bun.serve`, Deno's `Deno.serve`): the server's layers
 * from configuration, built before anything listens (migrations done, read-model runners, supervision and automatic
 * snapshots started), and Cairn's routes over them as one `Request` → `Response` handler that the runtime's own
 * server calls. When the program is interrupted (SIGTERM, SIGINT) the runtime's server stops first, then the
 * handler, then the layers (the database closes). Apps' domains (`AppRouting`) are proxied on the Node server only.
 */
import { CairnHttp, Tracing } from "@cairn/http"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Config, Effect, Layer, type Scope } from "effect"
import { HttpRouter } from "effect/http"
import * as CairnRuntime from "./CairnRuntime.ts"
import * as Main from "./Main.ts"
import * as Observability from "./Observability.ts"
import * as Shutdown from "./Shutdown.ts"

/** What a runtime's server is given: the handler, and where to listen (`PORT`, 3000; `HOST`, 0.0.0.0). */
export interface Listen {
  (handler: (request: Request) => Promise<Response>, address: { readonly port: number; readonly hostname: string }): Effect.Effect<
    void,
    unknown,
    Scope.Scope
  >
}

/**
 * Cairn's routes over `layer`'s services as one web handler, served as `CairnHttp.serve` serves them: the access
 * log, request ids and metrics from the routes' own middleware (the platform's logger off), tracing when configured.
 */
export const handler = <E>(layer: Layer.Layer<Exclude<CairnHttp.Requirements, HttpRouter.HttpRouter>, E>) =>
  Effect.gen(function*() {
    const web = HttpRouter.toWebHandler(
      CairnHttp.routes.pipe(Layer.provide(layer), Layer.provide(Tracing.layer)),
      { disableLogger: true }
    )
    yield* Effect.addFinalizer(() => Effect.promise(web.dispose))
    // A runtime's server passes more arguments (Bun its server, Deno connection info): only the request goes on.
    return (request: Request) => web.handler(request)
  })

/**
 * Runs Cairn's server on `listen` until interrupted; one program for every runtime (`runMain` it). Composed as the
 * Node server is: the same stop on signals (`Shutdown`), log format and level, and metrics read before a scrape.
 */
export const serve = (listen: Listen) =>
  Effect.gen(function*() {
    const port = yield* Config.Port("PORT").pipe(Config.withDefault(3000))
    const hostname = yield* Config.String("HOST").pipe(Config.withDefault("0.0.0.0"))
    // Before the application is built: a stop signal during a slow start is bounded too.
    yield* Layer.build(Shutdown.layer)
    const database = yield* CairnRuntime.databaseFromConfig
    const context = yield* Layer.build(
      Observability.layerMetrics.pipe(
        Layer.provideMerge(CairnRuntime.layerServer(database)),
        Layer.provideMerge(NodeServices.layer),
        Layer.merge(Main.layerLogLevel),
        Layer.merge(Observability.layerLogger)
      )
    )
    const web = yield* handler(Layer.succeedContext(context))
    yield* listen(web, { port, hostname })
    yield* Effect.logInfo(`Listening on http://${hostname}:${port}`)
    return yield* Effect.never
  }).pipe(Effect.scoped, Effect.provide(Layer.merge(Main.layerLogLevel, Observability.layerLogger)))
