/**
 * Every route Cairn serves, as one layer for `HttpRouter.serve` (Node) or `HttpRouter.toWebHandler` (Bun, Deno,
 * embedding). It needs the application services, the content store, the token signer, the admin token, and a
 * FileSystem and Path for staging uploads.
 */
import type { AgentChat, Agents, AgentsAt, EngineUpdates, ApiKeys, Files, Groups, Issues, Secrets, SecretVault, Signatures, SignedUrls, Skills, Workspaces } from "@cairn/application"
import type { Templates } from "@cairn/application"
import type { Console, WorkspaceFiles } from "@cairn/application"
import type { RuntimeConfig, Snapshots, Tasks } from "@cairn/application"
import type { Channels } from "@cairn/application"
import type { Domains } from "@cairn/application"
import type { DiskReserve } from "@cairn/application"
import type { PinJobs } from "@cairn/application"
import type { AuditFeed, AuditLog } from "@cairn/application"
import type { AdminToken, TokenSigner } from "@cairn/auth"
import type { ContentStore } from "@cairn/content-store"
import type { EventStore } from "@cairn/event-store"
import type { Config, FileSystem, Path } from "effect"
import { Layer } from "effect"
import { HttpRouter, type HttpServer } from "effect/http"
import * as AdminRoutes from "./AdminRoutes.ts"
import * as DocsRoutes from "./DocsRoutes.ts"
import * as GatewayRoutes from "./GatewayRoutes.ts"
import * as HealthRoutes from "./HealthRoutes.ts"
import * as MetricsRoutes from "./MetricsRoutes.ts"
import * as RequestEdge from "./RequestEdge.ts"
import * as RouteCatalog from "./RouteCatalog.ts"
import * as TlsAskRoutes from "./TlsAskRoutes.ts"
import * as Tracing from "./Tracing.ts"
import * as AuthRoutes from "./v3/AuthRoutes.ts"
import * as FilesRoutes from "./v3/FilesRoutes.ts"
import * as GroupsRoutes from "./v3/GroupsRoutes.ts"
import * as KeysRoutes from "./v3/KeysRoutes.ts"
import * as LegacyRoutes from "./v3/LegacyRoutes.ts"
import * as PinRoutes from "./v3/PinRoutes.ts"
import * as PsaRoutes from "./PsaRoutes.ts"
import * as SignatureRoutes from "./v3/SignatureRoutes.ts"
import * as SignedUrlRoutes from "./v3/SignedUrlRoutes.ts"
import * as V0Routes from "./v0/Routes.ts"

/** What the routes need from the application around them (the event store only for the readiness probe's ping). */
export type Requirements =
  | AgentChat | Agents | AgentsAt | EngineUpdates | ApiKeys | Files | Groups | Issues | Secrets | SecretVault | Signatures | SignedUrls | Skills | Workspaces | ContentStore | EventStore | TokenSigner | AdminToken.AdminToken
  | FileSystem.FileSystem | Path.Path | HttpRouter.HttpRouter
  | Templates
  | Console | WorkspaceFiles
  | RuntimeConfig | Tasks
  | Snapshots
  | Channels
  | Domains
  | DiskReserve
  | PinJobs
  | AuditFeed
  | AuditLog

export const routes: Layer.Layer<never, Config.ConfigError, Requirements> = Layer.mergeAll(
  // Before any route is matched, and around every route: request ids, metrics, NUL refusal, 404 and 405.
  RequestEdge.layer,
  HealthRoutes.layer,
  MetricsRoutes.layer,
  AuthRoutes.layer,
  FilesRoutes.layer,
  GroupsRoutes.layer,
  KeysRoutes.layer,
  LegacyRoutes.layer,
  PinRoutes.layer,
  PsaRoutes.layer,
  SignatureRoutes.layer,
  SignedUrlRoutes.layer,
  GatewayRoutes.layer,
  TlsAskRoutes.layer,
  AdminRoutes.layer,
  V0Routes.layer,
  DocsRoutes.layer
).pipe(
  // One record of every route registered: /openapi.json describes exactly the documented ones, the fallback
  // answers from all of them.
  Layer.provide(RouteCatalog.layer)
)

/**
 * How Cairn serves its routes: the access log (`ACCESS_LOG=true`), request ids and latency metrics come from
 * RequestEdge (RequestObservability.ts), so the platform's logger is off; failures are always logged, with their cause. Tracing
 * spans only when an OTLP endpoint is configured (Tracing.ts): otherwise every span would be built per request and
 * dropped (measured: bench:http, docs/performance.md). Servers and benchmarks share this, so what is measured is
 * what runs.
 */
export const serve = <E, R>(server: Layer.Layer<HttpServer.HttpServer, E, R>) =>
  HttpRouter.serve(routes, { disableLogger: true }).pipe(
    Layer.provide(server),
    Layer.provide(Tracing.layer)
  )
