/**
 * Cairn on a runtime that serves web requests itself (Bun's `Bun.serve`, Deno's `Deno.serve`): Cairn's routes over
 * the server's services (CairnServer.ts) as one `Request` → `Response` handler that the runtime's own server calls.
 * The services are built before anything listens (migrations done, read-model runners, supervision and automatic
 * snapshots started). When the program is interrupted (SIGTERM, SIGINT) the runtime's server stops first, then the
 * handler, then the services (the database closes). Apps' domains (`AppRouting`) and forwarding to other nodes
 * (`NodeForwarding`) are on the Node server only.
 */
import { CairnHttp, Tracing } from "@cairn/http"
import { Effect, Layer, type Scope } from "effect"
import { HttpRouter } from "effect/http"
import * as CairnServer from "./CairnServer.ts"

/** What a runtime's server is given: the handler, and where to listen (`PORT`, 3000; `HOST`, 127.0.0.1). */
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

/** Cairn's handler served by `listen`, over the server's services: the platform part of a Bun or Deno entry point. */
export const layer = (listen: Listen): Layer.Layer<never, unknown, CairnServer.Services> =>
  Layer.effectDiscard(Effect.gen(function*() {
    const { hostname, port } = yield* CairnServer.address
    const services = yield* Effect.context<CairnServer.Services>()
    const web = yield* handler(Layer.succeedContext(services))
    yield* listen(web, { port, hostname })
    yield* Effect.logInfo(`Listening on http://${hostname}:${port}`)
  }))

/** Runs Cairn's server on `listen` until interrupted (CairnServer.run). */
export const serve = (listen: Listen): void => CairnServer.run(layer(listen))
