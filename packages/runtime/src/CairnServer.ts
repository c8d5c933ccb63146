/**
 * Cairn's server, composed once for every entry point (Node, Bun, Deno): the application's layers from
 * configuration, the routes, and the process around them. An entry point gives only what its platform serves HTTP
 * with, as a layer over the server's services (`run`): the Node server (CairnHttp.serve over NodeHttpServer), or
 * a runtime's own server calling Cairn's web handler (WebServer.ts).
 * PORT (3000), HOST (127.0.0.1), DATA_DIR (./data), DATABASE_URL (unset: embedded PGlite), ACCESS_LOG (false),
 * LOG_LEVEL (Info), LOG_FORMAT (json, or pretty on a terminal), METRICS_TOKEN, OTEL_EXPORTER_OTLP_ENDPOINT; see
 * docs/operations.md. The server runs until SIGTERM or SIGINT: the listener stops, then the read-model runners and
 * agents' gateways, then the database closes, within SHUTDOWN_GRACE (a second signal stops it at once; Shutdown.ts).
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Config, Effect, Layer } from "effect"
import * as CairnRuntime from "./CairnRuntime.ts"
import * as Main from "./Main.ts"
import * as Observability from "./Observability.ts"
import * as Shutdown from "./Shutdown.ts"

/** Where the server listens: `PORT` (3000) and `HOST` (127.0.0.1: loopback only unless the operator says otherwise). */
export const address = Config.all({
  port: Config.Port("PORT").pipe(Config.withDefault(3000)),
  hostname: Config.String("HOST").pipe(Config.withDefault("127.0.0.1"))
})

/** The services the routes and the platform's server are given. */
export type Services = Layer.Success<ReturnType<typeof CairnRuntime.layerServer>> | NodeServices.NodeServices

/**
 * Everything the routes and the platform's server stand on: the application and its runners over the database the
 * environment names, metrics read before a scrape, the platform's file system, the log format and level.
 */
export const layer: Layer.Layer<Services, unknown> = Observability.layerMetrics.pipe(
  Layer.provideMerge(Layer.unwrap(Effect.map(CairnRuntime.databaseFromConfig, CairnRuntime.layerServer))),
  // Before the application is built: a stop signal during a slow start is bounded too.
  Layer.provideMerge(Shutdown.layer),
  Layer.provideMerge(NodeServices.layer),
  Layer.provideMerge(Main.layerLogLevel),
  Layer.provideMerge(Observability.layerLogger)
)


/**
 * Runs the server until interrupted: `platform` (what serves HTTP, built over `layer`'s services) for the life of
 * the process, failures reported as entry points report them, and a signalled stop exiting 0.
 */
export const run = <E>(platform: Layer.Layer<never, E, Services>): void =>
  platform.pipe(
    Layer.provide(layer),
    Layer.launch,
    Main.reportFailure,
    NodeRuntime.runMain({ teardown: Main.serverTeardown })
  )
