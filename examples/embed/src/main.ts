/**
 * Cairn embedded in an Effect program of your own: Cairn's layers (an in-memory PGlite event store, the simulated
 * agent engine, embedded IPFS in a data directory) mounted in this program's own HttpRouter next to its own route,
 * and Cairn's application services called directly. At start it makes a workspace, an API key and an agent through
 * the services (no HTTP), prints them as one JSON line, then serves HTTP: `GET /hello` is this program's route and
 * reads Cairn's services; everything else (`/v3`, `/v0`, `/healthz`, …) is Cairn's.
 *
 *   node examples/embed/src/main.ts     # PORT (3000; 0 for any free one), DATA_DIR (a fresh temporary directory)
 */
import { Agents, ApiKeys, Workspaces } from "@cairn/application"
import { PgDatabase } from "@cairn/event-store-pg"
import { CairnHttp } from "@cairn/http"
import { CairnRuntime } from "@cairn/runtime"
import { NodeHttpServer, NodeRuntime, NodeServices } from "@effect/platform-node"
import { Config, ConfigProvider, Console, Effect, Layer } from "effect"
import { HttpRouter, HttpServer, HttpServerResponse } from "effect/http"
import { mkdtempSync } from "node:fs"
import { createServer } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"

/** Cairn's settings for this program, ahead of the environment's: the simulated engine, and a data directory. */
const settings = ConfigProvider.layerAdd(
  ConfigProvider.fromUnknown({
    ENGINE: "simulated",
    SIMULATED_START_DELAY: "100 millis",
    DATA_DIR: process.env["DATA_DIR"] ?? mkdtempSync(join(tmpdir(), "cairn-embed-"))
  }),
  { asPrimary: true }
)

/** Cairn: its application services and the runners behind them, over an in-memory PGlite database. */
const CairnLive = CairnRuntime.layerServer(PgDatabase.layerPglite(undefined)).pipe(
  Layer.provideMerge(NodeServices.layer),
  Layer.provide(settings)
)

/** Cairn's services called directly: a workspace, an API key, and a running agent, before anything is served. */
const seed = Effect.gen(function*() {
  const workspaceId = yield* Workspaces.use((w) => w.create({ name: "Embedded", plan: "pro", internal: false }))
  const { token } = yield* ApiKeys.use((k) => k.create({ workspaceId, userId: "ada", scopes: ["org:agents", "org:files:read", "org:files:write"] }))
  const principal = yield* ApiKeys.use((k) => k.authenticate(token))
  const { agent } = yield* Agents.use((a) => a.create(principal, { name: "embedded-helper" }))
  yield* Console.log(JSON.stringify({ workspaceId, token, agentId: agent.agentId, agentStatus: agent.status }))
  return { workspaceId, agentId: agent.agentId }
})

/** This program's own route, beside Cairn's, reading Cairn's services like any other code of the program. */
const helloRoute = (seeded: { readonly workspaceId: string; readonly agentId: string }) =>
  HttpRouter.use((router) =>
    Effect.gen(function*() {
      const agents = yield* Agents
      yield* router.add("GET", "/hello", Effect.gen(function*() {
        const agent = yield* agents.get(seeded.workspaceId, seeded.agentId)
        return HttpServerResponse.jsonUnsafe({ hello: "from the embedding program", agent: { agentId: agent.agentId, name: agent.name, status: agent.status } })
      }).pipe(Effect.orDie))
    })
  )

const HttpLive = Layer.unwrap(Effect.map(
  Config.Int("PORT").pipe(Config.withDefault(3000)),
  (port) => HttpServer.withLogAddress(NodeHttpServer.layer(createServer, { port, host: "127.0.0.1" }))
))

// Seeded first, then served: the server listens once the seed is done.
Layer.unwrap(Effect.map(seed, (seeded) =>
  HttpRouter.serve(Layer.mergeAll(CairnHttp.routes, helloRoute(seeded)), { disableLogger: true }).pipe(Layer.provide(HttpLive))
)).pipe(
  Layer.provide(CairnLive),
  Layer.launch,
  NodeRuntime.runMain
)
