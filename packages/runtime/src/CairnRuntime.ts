/**
 * The layers every Cairn process is built from, chosen by configuration: the database (Postgres when
 * `DATABASE_URL` is set, embedded PGlite in `DATA_DIR` otherwise), the event store with its inline read models,
 * the content store (embedded IPFS, or Kubo when `KUBO_API_URL` is set), the signature verifier, the API-key
 * signer and the admin token, and the application services over them. Entry points add only how they serve.
 */
import { SimulatedAgentEngine } from "@cairn/agent-engine"
import { SimulatedGateway } from "@cairn/agent-engine/node"
import { OpenClawAgentCgroups, OpenClawAgentDisks, OpenClawAgentEngine, OpenClawAgentNetwork } from "@cairn/agent-engine-openclaw"
import { AgentsNode, ClusterSettings, Failover, Gateway, Services } from "@cairn/application"
import { AllowLocalGit, Templates, TrustedSkillSigners } from "@cairn/application"
import { defaultWorkspaceLimits, WorkspaceLimits } from "@cairn/application"
import { defaultSnapshotSettings, Snapshots, SnapshotSettings } from "@cairn/application"
import { defaultDomainSettings, Domains, DomainSettings } from "@cairn/application"
import { ChatTimeout, DiskReserveBytes } from "@cairn/application"
import { AgentPool, AgentSleep, defaultPoolSettings, defaultSleepSettings, PoolSettings, ReadyWait, SleepSettings } from "@cairn/application"
import { AgentsAt, AuditFeed, defaultPinSettings, LogSeals, PinJobs, PinSettings, SnapshotEvery, TemplateTasks } from "@cairn/application"
import { PinSources, trustlessGateways } from "@cairn/content-store"
import { NodeDns } from "@cairn/dns/node"
import { AdminToken, type GatewayTokens } from "@cairn/auth"
import { HashedAdminToken, HmacGatewayTokens, JoseTokenSigner, MasterKeysConfig, type SecretFile } from "@cairn/auth/node"
import { HeliaContentStore, HeliaSnapshotStore } from "@cairn/content-store-helia"
import { KuboContentStore, KuboSnapshotStore } from "@cairn/content-store-kubo"
import { Snapshot } from "@cairn/domain"
import { DataDirLock, PgDatabase, PgEventStore } from "@cairn/event-store-pg"
import type { PgClient } from "@effect/sql-pg"
import type { SqlClient } from "effect/sql"
import { Eip1271SignatureVerifier, EoaSignatureVerifier } from "@cairn/signatures"
import { SkillHubConfig } from "@cairn/skill-hub/node"
import { Catalog, IsomorphicGitRepositories } from "@cairn/templates/node"
import { Config, ConfigProvider, Duration, Effect, Layer, Option, Schema } from "effect"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import * as NodeFreeSpace from "./NodeFreeSpace.ts"
import * as ReadModels from "./ReadModels.ts"

/** A database: `PgDatabase.layer(…)` for configured ones, or any layer giving the same clients (tests, benches). */
export type DatabaseLayer = Layer.Layer<PgClient.PgClient | SqlClient.SqlClient, unknown>

/** The database and the event store over it, migrated, with every inline read model. */
export const layerStore = (database: DatabaseLayer) =>
  PgEventStore.layer({ inlineProjections: ReadModels.inline }).pipe(Layer.provideMerge(database))

const dataDir = Config.String("DATA_DIR").pipe(Config.withDefault("./data"))

/**
 * `KUBO_API_URL` (both networks) or `KUBO_PUBLIC_API_URL` + `KUBO_PRIVATE_API_URL`, each read bounded by
 * `KUBO_READ_TIMEOUT` (30 seconds); embedded IPFS otherwise.
 */
const layerContentStore = Layer.unwrap(Effect.gen(function*() {
  const both = yield* Config.option(Config.String("KUBO_API_URL"))
  const publicApiUrl = yield* Config.option(Config.String("KUBO_PUBLIC_API_URL"))
  const privateApiUrl = yield* Config.option(Config.String("KUBO_PRIVATE_API_URL"))
  const kubo = Option.isSome(publicApiUrl) && Option.isSome(privateApiUrl)
    ? Option.some({ publicApiUrl: publicApiUrl.value, privateApiUrl: privateApiUrl.value })
    : Option.map(both, (url) => ({ publicApiUrl: url, privateApiUrl: url }))
  if (Option.isSome(kubo)) {
    yield* Effect.logInfo(`Content store: Kubo at ${kubo.value.publicApiUrl} (public), ${kubo.value.privateApiUrl} (private)`)
    const readTimeout = yield* Config.Duration("KUBO_READ_TIMEOUT").pipe(Config.withDefault(Duration.seconds(30)))
    return KuboContentStore.layer({ ...kubo.value, readTimeout })
  }
  const dir = yield* dataDir
  yield* Effect.logInfo(`Content store: embedded IPFS in ${dir}/ipfs`)
  return HeliaContentStore.layer({ dataDir: dir })
}))

/**
 * Snapshot blocks: beside the content store's, in a namespace of their own (garbage collection of snapshots never
 * touches a user's files): `<DATA_DIR>/ipfs/snapshots` embedded, or the private Kubo node (named pins) when Kubo is
 * configured.
 */
const layerSnapshotStore = Layer.unwrap(Effect.gen(function*() {
  const privateApiUrl = yield* Config.option(Config.String("KUBO_PRIVATE_API_URL"))
  const both = yield* Config.option(Config.String("KUBO_API_URL"))
  const kubo = Option.orElse(privateApiUrl, () => both)
  if (Option.isSome(kubo)) {
    yield* Effect.logInfo(`Snapshot store: Kubo at ${kubo.value}`)
    return KuboSnapshotStore.layer({ privateApiUrl: kubo.value })
  }
  // Nodes of one host (or sharing a volume) can share the embedded blocks, so one adopts another's agents from them.
  const blocksDir = yield* Config.option(Config.String("SNAPSHOT_BLOCKS_DIR"))
  return Option.isSome(blocksDir)
    ? HeliaSnapshotStore.layerAt(blocksDir.value)
    : HeliaSnapshotStore.layer({ dataDir: yield* dataDir })
}))

/**
 * A duration setting in milliseconds: text such as "60 seconds" or "7 days"; with `allowZero`, "0" or "off" is 0
 * (none, or off), and without it the duration must be longer than 0.
 */
const durationMs = (name: string, fallbackMs: number, options: { readonly allowZero: boolean }) =>
  Config.String(name).pipe(
    Config.mapEffect((text) => {
      const trimmed = text.trim()
      if (options.allowZero && (trimmed === "0" || trimmed === "off")) return Effect.succeed(0)
      const parsed = Duration.fromInput(trimmed as Duration.Input)
      return Option.isSome(parsed) && (options.allowZero || Duration.toMillis(parsed.value) > 0)
        ? Effect.succeed(Duration.toMillis(parsed.value))
        : Effect.fail(new Config.ConfigError(new ConfigProvider.SourceError({ message: `${name}: "${text}" is not a duration such as "15 minutes"` })))
    }),
    Config.withDefault(fallbackMs)
  )

/**
 * Snapshots (docs/operations.md, "Snapshots"): `SNAPSHOTS=off` turns them off (`Storage not configured`);
 * `SNAPSHOT_INTERVAL` between automatic ones (60 s; 0 for none), `SNAPSHOT_RETENTION` snapshots kept per agent (50,
 * plus every pre-reset one), `SNAPSHOT_EXCLUDE` comma-separated globs left out (replacing the defaults),
 * `SNAPSHOT_DELETED_GRACE` how long a deleted agent's snapshots stay (7 days).
 */
const layerSnapshotSettings = Layer.effect(SnapshotSettings, Effect.gen(function*() {
  const enabled = yield* Config.Literals(["on", "off"], "SNAPSHOTS").pipe(Config.withDefault("on" as const))
  const keep = yield* Config.schema(Schema.NumberFromString.pipe(Schema.check(Schema.isInt(), Schema.isGreaterThan(0))), "SNAPSHOT_RETENTION").pipe(
    Config.withDefault(defaultSnapshotSettings.keep)
  )
  const excludeSetting = yield* Config.option(Config.String("SNAPSHOT_EXCLUDE"))
  const exclude = Option.isNone(excludeSetting) ? defaultSnapshotSettings.exclude : yield* Effect.fromResult(Snapshot.parsePatterns(excludeSetting.value)).pipe(
    Effect.orDie
  )
  return {
    enabled: enabled === "on",
    intervalMs: yield* durationMs("SNAPSHOT_INTERVAL", defaultSnapshotSettings.intervalMs, { allowZero: true }),
    keep,
    exclude,
    deletedGraceMs: yield* durationMs("SNAPSHOT_DELETED_GRACE", defaultSnapshotSettings.deletedGraceMs, { allowZero: true })
  }
}))

/**
 * Domains (docs/operations.md, "Domains, DNS and TLS"): `APPS_DOMAIN` that subdomains live under (apps.localhost),
 * `AGENTS_DOMAIN` that each agent's own host is under (agents.localhost: `<agentId>.agents.localhost`, decision 0046),
 * `DOMAIN_VERIFY_TIMEOUT` after which an unverified custom domain expires (7 days), `DOMAIN_CHECK_INTERVAL` between
 * background re-checks of pending ones (60 s, doubling per domain up to an hour; 0 for none), and `DNS_SERVERS`
 * (comma-separated `ip[:port]`) that TXT records are looked up on (the system's resolvers by default).
 */
const layerDomains = Layer.unwrap(Effect.gen(function*() {
  const appsDomain = yield* Config.String("APPS_DOMAIN").pipe(Config.withDefault(defaultDomainSettings.appsDomain))
  const agentsDomain = yield* agentsDomainConfig
  const servers = NodeDns.parseServers(yield* Config.String("DNS_SERVERS").pipe(Config.withDefault("")))
  yield* Effect.logInfo(`Domains: subdomains under ${appsDomain}, agents' own hosts under ${agentsDomain}; DNS ${servers.length === 0 ? "from the system" : servers.join(", ")}`)
  return Layer.merge(
    Layer.succeed(DomainSettings, {
      ...defaultDomainSettings,
      appsDomain,
      agentsDomain,
      verifyTimeoutMs: yield* durationMs("DOMAIN_VERIFY_TIMEOUT", defaultDomainSettings.verifyTimeoutMs, { allowZero: false }),
      checkIntervalMs: yield* durationMs("DOMAIN_CHECK_INTERVAL", defaultDomainSettings.checkIntervalMs, { allowZero: true })
    }),
    NodeDns.layer({ servers })
  )
}))

/** `AGENTS_DOMAIN`: each agent's own host is `<agentId>.<AGENTS_DOMAIN>` (decision 0046). */
const agentsDomainConfig = Config.String("AGENTS_DOMAIN").pipe(Config.withDefault(defaultDomainSettings.agentsDomain))

/** EOA signatures by default; `SIGNATURE_RPC_URL` also accepts contract wallets (ERC-1271) through that node. */
const layerSignatureVerifier = Layer.unwrap(Effect.map(
  Config.option(Config.String("SIGNATURE_RPC_URL")),
  Option.match({
    onNone: () => EoaSignatureVerifier.layer,
    onSome: (rpcUrl) => Eip1271SignatureVerifier.layer({ rpcUrl })
  })
))

// Typed with the port it provides, which the server's layers then name (the port sits in a namespace of
// `@cairn/auth`, which declarations can name only through an import).
const layerGatewayTokens = (
  dataDir: string
): Layer.Layer<GatewayTokens.GatewayTokens, Config.ConfigError | SecretFile.SecretFileError> =>
  HmacGatewayTokens.layerConfig({ dataDir })

/**
 * The API-key signer, the admin token, gateway tokens, and the secrets master keys: configured, or (on the embedded
 * database, a single node) kept in `DATA_DIR/secrets.key`, made at first start; with `DATABASE_URL` never made up.
 */
const layerCredentials = Layer.unwrap(Effect.gen(function*() {
  const dir = yield* dataDir
  const embedded = Option.isNone(yield* Config.option(Config.String("DATABASE_URL")))
  return Layer.mergeAll(
    JoseTokenSigner.layerConfig({ dataDir: dir }),
    HashedAdminToken.layerConfig({ dataDir: dir }),
    layerGatewayTokens(dir),
    MasterKeysConfig.layerConfig({ dataDir: dir, embedded })
  )
}))

/**
 * `ENGINE=openclaw`, the default, runs real OpenClaw gateways: versions are installed from the npm registry on first
 * use into `OPENCLAW_ENGINES_DIR` (`DATA_DIR/engines` by default); `OPENCLAW_VERSIONS` is an optional
 * comma-separated allowlist; `OPENCLAW_MAX_STARTS` bounds concurrent gateway starts (2); agent n's gateway listens on
 * `OPENCLAW_BASE_PORT` + 120·n (18789); `OPENCLAW_NODE` is the Node (≥ 24.16) that runs them; `OPENCLAW_COMPILE_CACHE`
 * (`on`; `off`) has Cairn fill each version's Node compile cache once and its gateways read it (decision 0054). `SANDBOX` isolates
 * each agent's processes with bubblewrap (docs/operations.md, "Sandbox"): `auto` (the default) refuses to start
 * agents when bubblewrap cannot run here, `required` then stops Cairn at start, `off` runs them unisolated.
 * `AGENT_MEMORY_MAX` (4GiB; bytes or `2GiB`-style), `AGENT_CPU_MAX` (the machine's cores; cores, `1.5`) and `AGENT_PIDS_MAX` (512) cap
 * what all of one agent's processes use together, in its cgroup (decision 0042); `AGENT_DISK_MAX` (10GiB; `off`) what it
 * stores, its home being a filesystem of that size (decision 0044). `AGENT_EGRESS_ALLOW` names the host
 * services (`address:port`, comma-separated) agents may reach from their own networks (decision 0043).
 * `ENGINE=simulated` is a deterministic engine in process; `SIMULATED_START_DELAY` sets how long its gateways take
 * to come up.
 */
/** `AGENT_MEMORY_MAX`, `AGENT_CPU_MAX`, `AGENT_PIDS_MAX`: what one agent's processes may use together. */
const agentLimitsConfig = Effect.gen(function*() {
  const defaults = OpenClawAgentCgroups.defaultAgentLimits
  const memory = yield* Config.String("AGENT_MEMORY_MAX").pipe(Config.withDefault(String(defaults.memoryBytes)))
  const cpus = yield* Config.Number("AGENT_CPU_MAX").pipe(Config.withDefault(defaults.cpus))
  const pids = yield* Config.Int("AGENT_PIDS_MAX").pipe(Config.withDefault(defaults.pids))
  const memoryBytes = OpenClawAgentCgroups.parseBytes(memory)
  if (memoryBytes === undefined) {
    return yield* Effect.die(new Error(`AGENT_MEMORY_MAX=${memory} is not a size: give bytes or e.g. 2GiB, 512MiB`))
  }
  if (!(cpus > 0)) return yield* Effect.die(new Error(`AGENT_CPU_MAX=${cpus} must be a number of cores above 0, e.g. 1.5`))
  if (!(pids > 0)) return yield* Effect.die(new Error(`AGENT_PIDS_MAX=${pids} must be a number of processes above 0`))
  return { memoryBytes, cpus, pids }
})

/** `AGENT_DISK_MAX`: what one agent may store in its home, its own filesystem (decision 0044); `0` or `off`: uncapped. */
const agentDiskConfig = Effect.gen(function*() {
  const value = yield* Config.String("AGENT_DISK_MAX").pipe(Config.withDefault(String(OpenClawAgentDisks.defaultDiskBytes)))
  if (value === "off" || value === "0") return 0
  const bytes = OpenClawAgentCgroups.parseBytes(value)
  if (bytes === undefined || bytes < OpenClawAgentDisks.minimumDiskBytes) {
    return yield* Effect.die(new Error(`AGENT_DISK_MAX=${value} is not a size of at least 64MiB: give bytes or e.g. 10GiB, or off`))
  }
  return bytes
})

const layerAgentEngine = Layer.unwrap(Effect.gen(function*() {
  const engine = yield* Config.Literals(["simulated", "openclaw"], "ENGINE").pipe(Config.withDefault("openclaw" as const))
  if (engine === "openclaw") {
    const dir = yield* dataDir
    const versions = yield* Config.option(Config.String("OPENCLAW_VERSIONS"))
    const enginesDir = yield* Config.String("OPENCLAW_ENGINES_DIR").pipe(Config.withDefault(Path.join(dir, "engines")))
    const maxConcurrentStarts = yield* Config.Int("OPENCLAW_MAX_STARTS").pipe(Config.withDefault(2))
    const basePort = yield* Config.Int("OPENCLAW_BASE_PORT").pipe(Config.withDefault(18789))
    const nodePath = yield* Config.option(Config.String("OPENCLAW_NODE"))
    const sandbox = yield* Config.Literals(["auto", "required", "off"], "SANDBOX").pipe(Config.withDefault("auto" as const))
    const compileCache = yield* Config.Literals(["on", "off"], "OPENCLAW_COMPILE_CACHE").pipe(Config.withDefault("on" as const))
    const agentLimits = yield* agentLimitsConfig
    const agentDiskBytes = yield* agentDiskConfig
    const agentsDomain = yield* agentsDomainConfig
    const port = yield* Config.Port("PORT").pipe(Config.withDefault(3000))
    const egressAllow = OpenClawAgentNetwork.parseEgressAllow(yield* Config.String("AGENT_EGRESS_ALLOW").pipe(Config.withDefault("")))
    if (typeof egressAllow === "string") return yield* Effect.die(new Error(egressAllow))
    yield* Effect.logInfo(`Agent engine: OpenClaw gateways in ${Path.join(dir, "agents")}, engines in ${enginesDir}, SANDBOX=${sandbox}`)
    return OpenClawAgentEngine.layer({
      dataDir: dir,
      agentLimits,
      agentDiskBytes,
      egressAllow,
      // The Control UI is opened from the agent's host: through Caddy (80, 443) or on Cairn's own port.
      agentsDomain,
      agentHostPorts: [port],
      enginesDir,
      maxConcurrentStarts,
      basePort,
      sandbox,
      compileCache: compileCache === "on",
      ...Option.match(nodePath, { onNone: () => ({}), onSome: (path) => ({ nodePath: path }) }),
      ...Option.match(versions, {
        onNone: () => ({}),
        onSome: (list) => ({ versions: list.split(",").map((v) => v.trim()).filter((v) => v !== "") })
      })
    })
  }
  const startDelay = yield* Config.String("SIMULATED_START_DELAY").pipe(Config.withDefault("2 seconds"))
  yield* Effect.logInfo(`Agent engine: simulated (gateways up after ${startDelay})`)
  // Homes of real gateways: agents an OpenClaw engine ran from this data directory, which this engine cannot run.
  const agentsDir = Path.join(yield* dataDir, "agents")
  const realHomes = yield* Effect.promise(() => Fs.readdir(agentsDir).catch(() => [] as Array<string>))
  if (realHomes.length > 0) {
    yield* Effect.logWarning(
      `${agentsDir} holds ${realHomes.length} agent(s) that ran on real OpenClaw gateways (${realHomes.slice(0, 5).join(", ")}` +
        `${realHomes.length > 5 ? ", …" : ""}): the simulated engine cannot run them, and reports them not_running. ` +
        `Start with ENGINE=openclaw (the default) to run them, or give the simulated engine its own DATA_DIR`
    )
  }
  return SimulatedAgentEngine.layer({ startDelay: startDelay as `${number} seconds`, openGateway: SimulatedGateway.open })
}))

/**
 * This node's name, which its agents are recorded under: `CAIRN_NODE_ID`, or a name made up on the first start and
 * kept in `DATA_DIR/node-id` (a node's agents live in its data directory, so the two go together).
 */
const layerNode = Layer.effect(AgentsNode, Effect.gen(function*() {
  const configured = yield* Config.option(Config.String("CAIRN_NODE_ID"))
  if (Option.isSome(configured)) return configured.value
  const file = Path.join(yield* dataDir, "node-id")
  return yield* Effect.promise(async () => {
    const existing = await Fs.readFile(file, "utf8").then((text) => text.trim(), () => "")
    if (existing !== "") return existing
    const made = `node-${crypto.randomUUID().slice(0, 8)}`
    await Fs.mkdir(Path.dirname(file), { recursive: true })
    await Fs.writeFile(file, `${made}\n`)
    return made
  })
}))

/**
 * Several nodes on one Postgres (docs/operations.md, "Several nodes"): `CAIRN_INTERNAL_URL` is where the others reach
 * this node, and makes it one of them (leases, forwarding, failover; decision 0028); `CAIRN_LEASE_TTL` (15 seconds)
 * is how long a node that stopped renewing its lease still holds its agents, renewed every `CAIRN_HEARTBEAT_INTERVAL`
 * (3 seconds). Ignored on the embedded database, a single node by nature.
 */
const layerCluster = Layer.effect(ClusterSettings, Effect.gen(function*() {
  const url = yield* Config.option(Config.URL("CAIRN_INTERNAL_URL"))
  const database = yield* Config.option(Config.String("DATABASE_URL"))
  const leaseTtl = yield* Config.Duration("CAIRN_LEASE_TTL").pipe(Config.withDefault(Duration.seconds(15)))
  const heartbeatInterval = yield* Config.Duration("CAIRN_HEARTBEAT_INTERVAL").pipe(Config.withDefault(Duration.seconds(3)))
  if (Option.isSome(url) && Option.isNone(database)) {
    yield* Effect.logWarning("CAIRN_INTERNAL_URL is set without DATABASE_URL: the embedded database is a single node's, so it is ignored")
  }
  const internalUrl = Option.isSome(url) && Option.isSome(database) ? url.value.href.replace(/\/$/, "") : undefined
  if (internalUrl !== undefined) {
    if (Duration.isLessThanOrEqualTo(leaseTtl, heartbeatInterval)) {
      return yield* Effect.die(new Error("CAIRN_LEASE_TTL must be longer than CAIRN_HEARTBEAT_INTERVAL"))
    }
    yield* Effect.logInfo(`Cluster: this node is reached at ${internalUrl}; lease ${Duration.format(leaseTtl)}, heartbeat every ${Duration.format(heartbeatInterval)}`)
  }
  return { internalUrl, leaseTtl, heartbeatInterval }
}))

/**
 * Templates: git through isomorphic-git, and `TEMPLATES_ALLOW_LOCAL_GIT=true` to let workspaces (not only the
 * admin API) publish from repositories on this machine or its networks; off by default.
 */
const layerTemplates = Layer.unwrap(Effect.map(
  Config.Boolean("TEMPLATES_ALLOW_LOCAL_GIT").pipe(Config.withDefault(false)),
  (allowLocalGit) => Layer.merge(IsomorphicGitRepositories.layer, Layer.succeed(AllowLocalGit, allowLocalGit))
))

/**
 * The limits on what the API does inside agents' workspaces (docs/operations.md, "Workspace limits"):
 * `CONSOLE_TIMEOUT_MS` (30000), `CONSOLE_MAX_OUTPUT_BYTES` per stream (1 MiB), `UPLOAD_MAX_BYTES` decoded (25 MiB)
 * and `FILE_READ_MAX_BYTES` (10 MiB); each a positive whole number.
 */
const layerWorkspaceLimits = Layer.effect(WorkspaceLimits, Effect.gen(function*() {
  const positive = (name: string, fallback: number) =>
    Config.schema(Schema.NumberFromString.pipe(Schema.check(Schema.isInt(), Schema.isGreaterThan(0))), name).pipe(Config.withDefault(fallback))
  return {
    consoleTimeoutMs: yield* positive("CONSOLE_TIMEOUT_MS", defaultWorkspaceLimits.consoleTimeoutMs),
    consoleMaxOutputBytes: yield* positive("CONSOLE_MAX_OUTPUT_BYTES", defaultWorkspaceLimits.consoleMaxOutputBytes),
    uploadMaxBytes: yield* positive("UPLOAD_MAX_BYTES", defaultWorkspaceLimits.uploadMaxBytes),
    fileReadMaxBytes: yield* positive("FILE_READ_MAX_BYTES", defaultWorkspaceLimits.fileReadMaxBytes)
  }
}))

/**
 * The free-space reserve on the data directory's disk (docs/operations.md, "Disk"): `DISK_RESERVE` (1GiB; bytes or
 * `2GiB`-style, `0` or `off` for none) is kept free of uploads and snapshots, which are refused below it (507).
 */
export const diskReserveConfig = Effect.gen(function*() {
  const setting = (yield* Config.String("DISK_RESERVE").pipe(Config.withDefault("1GiB"))).trim()
  const reserveBytes = setting === "0" || setting === "off" ? 0 : OpenClawAgentCgroups.parseBytes(setting)
  if (reserveBytes === undefined) {
    return yield* Effect.die(new Error(`DISK_RESERVE=${setting} is not a size: give bytes or e.g. 2GiB, 512MiB (0 for none)`))
  }
  return reserveBytes
})

const layerDiskReserve = Layer.unwrap(Effect.gen(function*() {
  const dir = yield* dataDir
  const reserveBytes = yield* diskReserveConfig
  yield* Effect.logInfo(reserveBytes === 0 ? "Disk reserve: off (DISK_RESERVE=0)" : `Disk reserve: ${reserveBytes} bytes kept free on ${dir}'s disk`)
  return Layer.merge(NodeFreeSpace.layer(dir), Layer.succeed(DiskReserveBytes, reserveBytes))
}))

/**
 * Pin by CID (docs/operations.md, "Pin by CID"): `PIN_SOURCES`, comma-separated base URLs of gateways serving trustless
 * responses (another Cairn's, any IPFS gateway's `/ipfs/<cid>?format=car|raw`) or Kubo RPCs (`kubo+http://…:5001`),
 * tried in order, then the content store's Kubo node when there is one; `PIN_MAX_BYTES` a DAG's most bytes (1GiB: held
 * in memory until every block is checked); `PIN_CONCURRENCY`
 * jobs at once (4); `PIN_TIMEOUT` for one job (10 minutes) before it fails.
 */
const layerPins = Layer.unwrap(Effect.gen(function*() {
  const configured = (yield* Config.String("PIN_SOURCES").pipe(Config.withDefault(""))).split(",").map((url) => url.trim()).filter((url) => url !== "")
  for (const url of configured) {
    const plain = url.replace(/^kubo\+/, "")
    if (!URL.canParse(plain) || !/^https?:$/.test(new URL(plain).protocol)) {
      return yield* Effect.die(new Error(`PIN_SOURCES: "${url}" is not an http(s) URL (or kubo+http(s) for a Kubo RPC)`))
    }
  }
  // With Kubo as the content store, its public node is asked too (after PIN_SOURCES): it finds blocks on the network.
  const kuboPublic = yield* Config.option(Config.String("KUBO_PUBLIC_API_URL"))
  const kuboApi = Option.isSome(kuboPublic) ? kuboPublic : yield* Config.option(Config.String("KUBO_API_URL"))
  const urls = Option.isSome(kuboApi) ? [...configured, `kubo+${kuboApi.value.replace(/\/+$/, "")}`] : configured
  const concurrency = yield* Config.Int("PIN_CONCURRENCY").pipe(Config.withDefault(defaultPinSettings.concurrency))
  const maxBytesSetting = yield* Config.String("PIN_MAX_BYTES").pipe(Config.withDefault("1GiB"))
  const maxBytes = OpenClawAgentCgroups.parseBytes(maxBytesSetting.trim())
  if (maxBytes === undefined || maxBytes <= 0) return yield* Effect.die(new Error(`PIN_MAX_BYTES=${maxBytesSetting} is not a size: give bytes or e.g. 1GiB, 512MiB`))
  const timeout = yield* Config.Duration("PIN_TIMEOUT").pipe(Config.withDefault(Duration.millis(defaultPinSettings.timeoutMs)))
  if (concurrency < 1) return yield* Effect.die(new Error(`PIN_CONCURRENCY=${concurrency} must be at least 1`))
  yield* Effect.logInfo(urls.length === 0 ? "Pin by CID: no PIN_SOURCES (pin jobs fail until one is set)" : `Pin by CID: sources ${urls.join(", ")}`)
  return Layer.merge(
    Layer.succeed(PinSources, trustlessGateways(urls, { maxBytes })),
    Layer.succeed(PinSettings, { concurrency, timeoutMs: Duration.toMillis(timeout) })
  )
}))

/** How long a chat turn with an agent may take before it is answered 504 (`CHAT_TIMEOUT`, 120 seconds). */
const layerChat = Layer.unwrap(Effect.gen(function*() {
  const timeout = yield* Config.Duration("CHAT_TIMEOUT").pipe(Config.withDefault(Duration.seconds(120)))
  if (Duration.toMillis(timeout) <= 0) return yield* Effect.die(new Error("CHAT_TIMEOUT must be longer than 0"))
  return Layer.succeed(ChatTimeout, timeout)
}))

/**
 * `SKILLS_TRUSTED_SIGNERS`: comma-separated wallet addresses; when set, a skill version is attached or installed only
 * when its folder CID carries the EIP-712 signature of one of them (docs/operations.md, "Signed skills"). An entry that
 * is not an address stops Cairn at start.
 */
const layerSkillSigners = Layer.unwrap(Effect.gen(function*() {
  const configured = (yield* Config.String("SKILLS_TRUSTED_SIGNERS").pipe(Config.withDefault(""))).split(",").map((a) => a.trim()).filter((a) => a !== "")
  const bad = configured.find((address) => !/^0x[0-9a-fA-F]{40}$/.test(address))
  if (bad !== undefined) return yield* Effect.die(new Error(`SKILLS_TRUSTED_SIGNERS: "${bad}" is not a wallet address (0x and 40 hex digits)`))
  if (configured.length > 0) yield* Effect.logInfo(`Skills: only versions signed by ${configured.join(", ")} are attached`)
  return Layer.succeed(TrustedSkillSigners, configured)
}))

/** How many events a time travel folds before it keeps a snapshot (`TIME_TRAVEL_SNAPSHOT_EVERY`, 10,000; decision 0048). */
const layerTimeTravel = Layer.unwrap(Effect.gen(function*() {
  const every = yield* Config.schema(Schema.NumberFromString.pipe(Schema.check(Schema.isInt(), Schema.isGreaterThan(0))), "TIME_TRAVEL_SNAPSHOT_EVERY").pipe(
    Config.withDefault(10_000)
  )
  return Layer.succeed(SnapshotEvery, every)
}))

/**
 * Sleep and wake (decision 0055, docs/operations.md "Agents that sleep"): `AGENT_IDLE_AFTER` (15 minutes; 0 or off:
 * agents never sleep), `AGENT_SLEEP_WITH_CHANNELS` (`off`: an agent with a messaging channel stays awake, as a
 * polling channel cannot wake it), `AGENT_WAKE_LEAD` (60 seconds before a scheduled task falls due);
 * `GATEWAY_READY_WAIT` (20 seconds), how long a request that needs a gateway waits for its start or wake.
 */
const layerSleep = Layer.unwrap(Effect.gen(function*() {
  const idleAfterMs = yield* durationMs("AGENT_IDLE_AFTER", defaultSleepSettings.idleAfterMs, { allowZero: true })
  const channels = yield* Config.Literals(["on", "off"], "AGENT_SLEEP_WITH_CHANNELS").pipe(Config.withDefault("off" as const))
  const wakeLeadMs = yield* durationMs("AGENT_WAKE_LEAD", defaultSleepSettings.wakeLeadMs, { allowZero: false })
  // Idle times shorter than the default check interval (tests, demos) are looked at as often as they need.
  const checkEveryMs = idleAfterMs > 0 ? Math.max(1000, Math.min(defaultSleepSettings.checkEveryMs, Math.floor(idleAfterMs / 4))) : defaultSleepSettings.checkEveryMs
  yield* Effect.logInfo(idleAfterMs > 0
    ? `Agents sleep after ${Duration.format(Duration.millis(idleAfterMs))} idle${channels === "on" ? ", those with channels too" : " (not those with channels)"}`
    : "Agents never sleep (AGENT_IDLE_AFTER=0)")
  // How long a request that needs a gateway waits for it to start or wake, before 503 with Retry-After.
  const readyWaitMs = yield* durationMs("GATEWAY_READY_WAIT", 20_000, { allowZero: false })
  return Layer.merge(
    Layer.succeed(SleepSettings, { idleAfterMs, channelsSleep: channels === "on", checkEveryMs, wakeLeadMs }),
    Layer.succeed(ReadyWait, Duration.millis(readyWaitMs))
  )
}))

/**
 * The warm pool (decision 0058, docs/operations.md "The warm pool"): `AGENT_POOL_SIZE` gateways (1; 0 turns it off)
 * started ahead on this node, each taken by a create that gives no secrets, template or fork.
 */
const layerPool = Layer.unwrap(Effect.gen(function*() {
  const size = yield* Config.schema(Schema.NumberFromString.pipe(Schema.check(Schema.isInt(), Schema.isGreaterThanOrEqualTo(0))), "AGENT_POOL_SIZE").pipe(
    Config.withDefault(1)
  )
  yield* Effect.logInfo(size > 0 ? `Warm pool: ${size} gateway${size === 1 ? "" : "s"} started ahead` : "Warm pool: off (AGENT_POOL_SIZE=0)")
  return Layer.succeed(PoolSettings, { ...defaultPoolSettings, size })
}))

/** The skill hub: a ClawHub-compatible registry at `CLAWHUB_URL`, else the offline catalog in `<DATA_DIR>/hub`. */
const layerSkillHub = Layer.unwrap(Effect.map(dataDir, (dir) => SkillHubConfig.layer({ dataDir: dir })))

/** The application services and everything they stand on, except the database (given by the caller). */
export const layerApplication = (database: DatabaseLayer) =>
  Services.layer.pipe(
    Layer.provideMerge(layerTemplates),
    Layer.provideMerge(Layer.mergeAll(layerContentStore, layerSignatureVerifier, layerCredentials, layerAgentEngine, layerNode, layerSkillHub,
      layerWorkspaceLimits, layerSnapshotStore, layerSnapshotSettings, layerDomains, layerCluster, layerDiskReserve, layerPins, layerChat, layerSkillSigners, layerTimeTravel, layerSleep, layerPool)),
    Layer.provideMerge(layerStore(database))
  )

/** Tells the operator where the admin token is (never what it is). */
const logAdminToken = Layer.effectDiscard(Effect.gen(function*() {
  const { source } = yield* AdminToken.AdminToken
  yield* Effect.logInfo(
    source._tag === "Config"
      ? "Admin token: from ADMIN_TOKEN"
      : `Admin token: ${source.created ? "generated into" : "in"} ${source.path} (the CLI reads it from there)`
  )
}))

/** Agents whose gateways ran before this process started are started again, then watched for crashes. */
const resumeAgents = Layer.effectDiscard(Gateway.use((gateway) =>
  gateway.resume.pipe(Effect.andThen(Effect.forkScoped(gateway.watch)))
))

/** This node's heartbeat and the adoption of agents whose node's lease expired (on several nodes only). */
const failover = Layer.effectDiscard(Failover.use((f) => f.run))

/** Automatic snapshots of this node's running agents, for as long as the server runs. */
const autoSnapshots = Layer.effectDiscard(Snapshots.use((snapshots) => Effect.forkScoped(snapshots.run)))

/** Pending custom domains re-checked and expired, deleted agents' domains removed, for as long as the server runs. */
const domainChecks = Layer.effectDiscard(Domains.use((domains) => Effect.forkScoped(domains.run)))

/** The tasks agents' templates declare, created once each agent runs, for as long as the server runs. */
const templateTasks = Layer.effectDiscard(TemplateTasks.use((tasks) => Effect.forkScoped(tasks.run())))

/** Pin-by-CID jobs worked on (those a stop left open first), for as long as the server runs. */
const pinWorker = Layer.effectDiscard(PinJobs.use((pins) => Effect.forkScoped(pins.run)))

/** Audit webhooks delivered to (each from where it stopped), for as long as the server runs (decision 0050). */
const auditWebhooks = Layer.effectDiscard(AuditFeed.use((audit) => Effect.forkScoped(audit.run)))

/** Time-travel snapshots kept as agents' histories grow, so that the first travel to a point is fast too (decision 0048). */
const timeTravelSnapshots = Layer.effectDiscard(AgentsAt.use((at) => Effect.forkScoped(at.run)))

/** Idle agents put to sleep, and sleeping ones woken for their scheduled tasks, for as long as the server runs. */
const agentSleep = Layer.effectDiscard(AgentSleep.use((sleep) => Effect.forkScoped(sleep.run)))
const agentPool = Layer.effectDiscard(AgentPool.use((pool) => Effect.forkScoped(pool.run)))

/** The log sealed as it grows: every event hashed, every block signed (decision 0053). */
const logSealer = Layer.effectDiscard(LogSeals.use((seals) => Effect.forkScoped(seals.run)))

/**
 * The templates Cairn ships are in the catalog, public and featured: published on a fresh install, given a new
 * version when an upgrade changed them, left alone otherwise. A failure (IPFS out of reach) is logged, not fatal.
 */
const seedTemplates = Layer.effectDiscard(Templates.use((templates) =>
  Effect.promise(() => Catalog.shipped()).pipe(
    Effect.flatMap(templates.publishShipped),
    Effect.flatMap((outcomes) =>
      Effect.logInfo(`Shipped templates: ${outcomes.map((o) => `${o.slug} ${o.outcome}`).join(", ")}`)
    ),
    Effect.catchCause((cause) => Effect.logWarning("Shipped templates were not published", cause))
  )
))

/** One server per data directory (event-store-pg DataDirLock.ts): held before anything in it is opened, released last. */
const layerDataDirLock = Layer.effectDiscard(Effect.flatMap(dataDir, (dir) => DataDirLock.acquire(dir)))

/** What a server runs: the application, plus the runners that keep asynchronous read models current. */
export const layerServer = (database: DatabaseLayer) =>
  Layer.mergeAll(ReadModels.layerRunners, logAdminToken, resumeAgents, autoSnapshots, domainChecks, failover, pinWorker, templateTasks, auditWebhooks, logSealer, timeTravelSnapshots, agentSleep, agentPool).pipe(Layer.merge(seedTemplates), Layer.provideMerge(layerApplication(database)), Layer.provide(layerDataDirLock))

/** The database chosen by the environment, logged (never a password). */
export const databaseFromConfig = Effect.gen(function*() {
  const database = yield* PgDatabase.fromConfig
  yield* Effect.logInfo(`Event store: ${PgDatabase.describe(database)}`)
  return PgDatabase.layer(database)
})
