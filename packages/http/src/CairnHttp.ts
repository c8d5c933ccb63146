/**
 * Every route Cairn serves, as one layer for `HttpRouter.serve` (Node) or `HttpRouter.toWebHandler` (Bun, Deno,
 * embedding). It needs the application services, the content store, the token signer, the admin token, and a
 * FileSystem and Path for staging uploads.
 */
import type { Agents, ApiKeys, Files, Issues, Secrets, SecretVault, Signatures, Skills, Workspaces } from "@cairn/application"
import type { Templates } from "@cairn/application"
import type { Console, WorkspaceFiles } from "@cairn/application"
import type { RuntimeConfig, Snapshots, Tasks } from "@cairn/application"
import type { Channels } from "@cairn/application"
import type { Domains } from "@cairn/application"
import type { AdminToken, TokenSigner } from "@cairn/auth"
import type { ContentStore } from "@cairn/content-store"
import type { EventStore } from "@cairn/event-store"
import { Config, Effect, type FileSystem, Layer, type Path, References } from "effect"
import { HttpRouter, type HttpServer } from "effect/http"
import * as AdminRoutes from "./AdminRoutes.ts"
import * as GatewayRoutes from "./GatewayRoutes.ts"
import * as HealthRoutes from "./HealthRoutes.ts"
import * as RejectNul from "./RejectNul.ts"
import * as TlsAskRoutes from "./TlsAskRoutes.ts"
import * as AuthRoutes from "./v3/AuthRoutes.ts"
import * as FilesRoutes from "./v3/FilesRoutes.ts"
import * as SignatureRoutes from "./v3/SignatureRoutes.ts"
import * as V0Routes from "./v0/Routes.ts"

/** What the routes need from the application around them (the event store only for the readiness probe's ping). */
export type Requirements =
  | Agents | ApiKeys | Files | Issues | Secrets | SecretVault | Signatures | Skills | Workspaces | ContentStore | EventStore | TokenSigner | AdminToken.AdminToken
  | FileSystem.FileSystem | Path.Path | HttpRouter.HttpRouter
  | Templates
  | Console | WorkspaceFiles
  | RuntimeConfig | Tasks
  | Snapshots
  | Channels
  | Domains

export const routes: Layer.Layer<never, Config.ConfigError, Requirements> = Layer.mergeAll(
  RejectNul.layer,
  HealthRoutes.layer,
  AuthRoutes.layer,
  FilesRoutes.layer,
  SignatureRoutes.layer,
  GatewayRoutes.layer,
  TlsAskRoutes.layer,
  AdminRoutes.layer,
  V0Routes.layer
)

/**
 * How Cairn serves its routes: one access-log line per request only when `ACCESS_LOG=true` (failures are always
 * logged, with their cause), and no tracing spans: no trace exporter is wired yet, so every span would be built
 * per request and dropped (measured: bench:http, docs/performance.md). Servers and benchmarks share this, so
 * what is measured is what runs.
 */
export const serve = <E, R>(server: Layer.Layer<HttpServer.HttpServer, E, R>) =>
  Layer.unwrap(Effect.map(
    Config.Boolean("ACCESS_LOG").pipe(Config.withDefault(false)),
    (accessLog) =>
      HttpRouter.serve(routes, { disableLogger: !accessLog }).pipe(
        Layer.provide(server),
        Layer.provide(Layer.succeed(References.TracerEnabled, false))
      )
  ))
