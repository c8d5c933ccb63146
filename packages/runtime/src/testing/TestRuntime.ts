/**
 * The runtime every HTTP test uses: the application over a fresh database (PGlite, or a new database on the
 * Postgres server `DATABASE_URL` points at), the simulated engine, in-memory IPFS and fixed test credentials; and
 * a client that sends requests through Cairn's real routes as a web handler, with the admin calls tests need to
 * make workspaces and keys. `@cairn/runtime/testing`.
 */
import { SimulatedAgentEngine, SimulatedEngineControl } from "@cairn/agent-engine"
import { SimulatedGateway } from "@cairn/agent-engine/node"
import { ChatTimeout, defaultSleepSettings, ReadyWait, Services, type SleepSettings as SleepSettingValues, SleepSettings } from "@cairn/application"
import { defaultPoolSettings, type PoolSettings as PoolSettingValues, PoolSettings } from "@cairn/application"
import { AllowLocalGit } from "@cairn/application"
import { defaultWorkspaceLimits, type WorkspaceLimitValues, WorkspaceLimits } from "@cairn/application"
import { defaultSnapshotSettings, type SnapshotSettingValues, SnapshotSettings } from "@cairn/application"
import { defaultDomainSettings, type DomainSettingValues, DomainSettings } from "@cairn/application"
import { DiskReserveBytes, FreeSpace, TrustedSkillSigners } from "@cairn/application"
import type { Dns } from "@cairn/dns"
import { NodeDns } from "@cairn/dns/node"
import type { AdminToken, GatewayTokens, MasterKeys } from "@cairn/auth"
import { TokenSigner } from "@cairn/auth"
import { ConfigMasterKeys, HashedAdminToken, HmacGatewayTokens, JoseTokenSigner } from "@cairn/auth/node"
import { HeliaContentStore, HeliaSnapshotStore } from "@cairn/content-store-helia"
import type { SnapshotStore } from "@cairn/content-store"
import { layerTest as layerTestDatabase } from "@cairn/event-store-pg/testing"
import { CairnHttp, RouteCatalog } from "@cairn/http"
import { EoaSignatureVerifier } from "@cairn/signatures"
import type { SkillHub } from "@cairn/skill-hub"
import { LocalCatalog } from "@cairn/skill-hub/node"
import { IsomorphicGitRepositories } from "@cairn/templates/node"
import { NodeServices } from "@effect/platform-node"
import { type Duration, Effect, Layer, ManagedRuntime, Redacted } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { HttpRouter } from "effect/http"
import { layerStore } from "../CairnRuntime.ts"
import * as TestLogs from "./TestLogs.ts"
import * as ResponseValidation from "./ResponseValidation.ts"

export const adminToken = "admin-secret"

export interface TestRuntimeOptions {
  /** Replaces the API-key signer, e.g. to inject a failure nothing else can provoke. */
  readonly signer?: Layer.Layer<TokenSigner, unknown>
  /** The secrets master keys (a fresh random key by default; `NoMasterKeys.layer` for "not configured"). */
  readonly masterKeys?: Layer.Layer<MasterKeys, unknown>
  /** How long the simulated engine's gateways take to come up (20 ms). */
  readonly startDelay?: `${number} millis`
  /** The skill hub (an empty offline catalog in a fresh temporary directory by default). */
  readonly skillHub?: Layer.Layer<SkillHub, unknown>
  /** Whether workspaces may publish templates from repositories on this machine (TEMPLATES_ALLOW_LOCAL_GIT; false). */
  readonly allowLocalGit?: boolean
  /** Console and file limits replacing the defaults (a short console timeout, a small upload limit). */
  readonly workspaceLimits?: Partial<WorkspaceLimitValues>
  /** Snapshot settings replacing the defaults (automatic snapshots are off in tests unless an interval is given). */
  readonly snapshots?: Partial<SnapshotSettingValues>
  /** The snapshot store (in memory by default), e.g. one on disk or one that fails. */
  readonly snapshotStore?: Layer.Layer<SnapshotStore, unknown>
  /** The DNS port (the system's resolver by default; a loopback server's in domain tests). */
  readonly dns?: Layer.Layer<Dns, unknown>
  /** Domain settings replacing the defaults (the background check is off in tests: call `Domains.round`). */
  readonly domains?: Partial<DomainSettingValues>
  /** How long a request that needs a gateway waits for one that is starting (ReadyWait; 20 seconds). */
  readonly readyWait?: Duration.Input
  /** Sleep and wake settings replacing the defaults (agents never sleep in tests unless `idleAfterMs` is given; call `AgentSleep.round`). */
  readonly sleep?: Partial<SleepSettingValues>
  /** Warm pool settings (no pool in tests unless `size` is given; call `AgentPool.round` to fill it). */
  readonly pool?: Partial<PoolSettingValues>
  /** How long a chat turn may take before it is answered 504 (ChatTimeout; 120 seconds). */
  readonly chatTimeout?: Duration.Input
  /** The data directory's free space (plenty by default; `FreeSpace.layerTest` makes a disk that runs low). */
  readonly freeSpace?: Layer.Layer<FreeSpace, unknown>
  /** The disk reserve in bytes (DISK_RESERVE; 1 GiB by default, 0 for none). */
  readonly diskReserveBytes?: number
  /** The wallets whose signatures let a skill be attached (SKILLS_TRUSTED_SIGNERS; none required by default). */
  readonly trustedSkillSigners?: ReadonlyArray<string>
}

/** What the default test disk has free: far above any reserve. */
const plentyFree = 1024 ** 4

const randomMasterKey = () => btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))))
const layerMasterKeys = () => ConfigMasterKeys.layer({ current: Redacted.make(randomMasterKey()), previous: [] })

// Typed with the ports they provide, which the test layers then name (the ports sit in namespaces of `@cairn/auth`,
// which declarations can name only through an import).
const layerTokens: Layer.Layer<AdminToken.AdminToken | GatewayTokens.GatewayTokens, AdminToken.InvalidAdminToken> =
  Layer.merge(
    HashedAdminToken.layer(Redacted.make(adminToken)),
    HmacGatewayTokens.layer(Redacted.make("gateway-key-for-tests-only-gateway-key-for"))
  )

const layerSigner = Layer.effect(TokenSigner, Effect.flatMap(JoseTokenSigner.generate, JoseTokenSigner.make))

/** The application services and everything under them, for tests. */
export const layerTest = (options: TestRuntimeOptions = {}) =>
  Services.layer.pipe(
    Layer.provideMerge(Layer.merge(IsomorphicGitRepositories.layer, Layer.succeed(AllowLocalGit, options.allowLocalGit ?? false))),
    Layer.provideMerge(Layer.mergeAll(
      options.signer ?? layerSigner,
      options.masterKeys ?? layerMasterKeys(),
      layerTokens,
      SimulatedAgentEngine.layer({ startDelay: options.startDelay ?? "20 millis", openGateway: SimulatedGateway.open }),
      HeliaContentStore.layerMemory,
      options.skillHub ?? LocalCatalog.layer({ dir: Fs.mkdtempSync(Path.join(Os.tmpdir(), "cairn-hub-")) }),
      EoaSignatureVerifier.layer,
      Layer.succeed(WorkspaceLimits, { ...defaultWorkspaceLimits, ...options.workspaceLimits }),
      options.snapshotStore ?? HeliaSnapshotStore.layerMemory,
      Layer.succeed(SnapshotSettings, { ...defaultSnapshotSettings, intervalMs: 0, ...options.snapshots }),
      options.dns ?? NodeDns.layer(),
      Layer.succeed(DomainSettings, { ...defaultDomainSettings, checkIntervalMs: 0, ...options.domains }),
      options.readyWait === undefined ? Layer.empty : Layer.succeed(ReadyWait, options.readyWait),
      options.chatTimeout === undefined ? Layer.empty : Layer.succeed(ChatTimeout, options.chatTimeout),
      Layer.succeed(SleepSettings, { ...defaultSleepSettings, idleAfterMs: 0, ...options.sleep }),
      Layer.succeed(PoolSettings, { ...defaultPoolSettings, ...options.pool }),
      options.freeSpace ?? FreeSpace.layerTest(() => plentyFree),
      options.diskReserveBytes === undefined ? Layer.empty : Layer.succeed(DiskReserveBytes, options.diskReserveBytes),
      options.trustedSkillSigners === undefined ? Layer.empty : Layer.succeed(TrustedSkillSigners, options.trustedSkillSigners)
    )),
    Layer.provideMerge(layerStore(layerTestDatabase())),
    Layer.provideMerge(NodeServices.layer),
    Layer.provideMerge(TestLogs.layer) // the application's log is kept, not printed (TestLogs.ts)
  )

export interface Reply {
  readonly status: number
  readonly body: Record<string, any> | undefined
  /** The response's `content-type` header, if it had one. */
  readonly contentType: string | undefined
}

/** A web response read as a `Reply`: its status, its content type and its body parsed as JSON (none if empty). */
export const replyOf = async (response: Response): Promise<Reply> => {
  const text = await response.text()
  return {
    status: response.status,
    body: text === "" ? undefined : JSON.parse(text) as Record<string, any>,
    contentType: response.headers.get("content-type") ?? undefined
  }
}

/** A test runtime with a client for its routes. Dispose it in `afterAll`. */
export const makeTestApi = (options: TestRuntimeOptions = {}) => {
  const app = layerTest(options)
  const runtime = ManagedRuntime.make(app)
  // Strict responses: a route that sends a field its response Schema lacks answers 500 here (RouteCatalog.ts).
  const routes = CairnHttp.routes.pipe(Layer.provide(Layer.succeed(RouteCatalog.StrictResponses, true)))
  const web = HttpRouter.toWebHandler(routes.pipe(Layer.provide(app), Layer.provideMerge(TestLogs.layer)), { memoMap: runtime.memoMap, disableLogger: true })

  /** A JSON request with an optional bearer token; the reply's body parsed. */
  const request = async (method: string, path: string, token?: string, body?: unknown): Promise<Reply> => {
    const response = await web.handler(new Request(`http://cairn${path}`, {
      method,
      headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    }))
    const reply = await replyOf(response)
    // Every JSON answer is checked against the document the server serves (ResponseValidation.ts).
    if (reply.contentType?.startsWith("application/json") === true) {
      ;(await responses()).check(method, path, reply.status, reply.body)
    }
    return reply
  }
  let validator: Promise<ResponseValidation.ResponseValidator> | undefined
  /** The response validator, from the server's own `/openapi.json`; `skipped` lists the routes it cannot check yet. */
  const responses = () =>
    validator ??= web.handler(new Request("http://cairn/openapi.json")).then(async (r) =>
      ResponseValidation.make(await r.json() as ResponseValidation.Document))
  const admin = (path: string, body: unknown) => request("POST", path, adminToken, body).then((r) => r.body!["data"])
  /** A new workspace's id. */
  const workspace = (agentLimit: number, options: { readonly internal?: boolean; readonly plan?: "free" | "pro" } = {}) =>
    admin("/admin/workspaces", { name: "W", plan: options.plan ?? "pro", agentLimit, internal: options.internal ?? false }).then((w) => w.id as string)
  const key = (workspaceId: string, scopes = ["org:agents"], userId = "ada", expiresInSeconds?: number) =>
    admin("/admin/keys", { workspaceId, userId, scopes, ...(expiresInSeconds === undefined ? {} : { expiresInSeconds }) }) as Promise<{
      keyId: string
      token: string
    }>
  /** Drives the simulated engine: scripted failures, crashes, devices. */
  const control = <A>(f: (c: SimulatedEngineControl["Service"]) => Effect.Effect<A, unknown>) =>
    runtime.runPromise(SimulatedEngineControl.use(f) as Effect.Effect<A>)
  const dispose = async () => {
    await web.dispose()
    await runtime.dispose()
  }
  return { runtime, web, request, admin, workspace, key, control, dispose, responses }
}
