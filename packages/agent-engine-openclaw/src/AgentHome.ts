/**
 * An agent's home on disk, `<dataDir>/agents/<agentId>/`: OPENCLAW_HOME for every OpenClaw process of the agent,
 * with `openclaw.json` (the offline config of reference §2.1 at first, the user's runtime config later, with the
 * settings Cairn owns kept in place) and its log file. The agent writes anything there, so Cairn reads and writes
 * its files only through HomeFiles (no symlink followed) and trusts nothing it reads there for a decision.
 *
 * What Cairn must trust lives beside the home, in a folder the agent's sandbox never shows (it shows only the home):
 * `<dataDir>/agents-meta/<agentId>/`, with `engine.json` (the engine version and port slot, kept across restarts of
 * Cairn) and the gateway's pid record (GatewayProcess.ts). Earlier Cairns kept `cairn-agent.json` in the home: it is
 * read once, when there is no `engine.json` yet, only if it is a regular file (no symlink), for its slot and a
 * version that is a plain name, and then removed (decision 0041). The gateway token is never written anywhere: the
 * config refers to `${OPENCLAW_GATEWAY_TOKEN}`, which only the processes' environment holds.
 */
import { EngineUnavailable } from "@cairn/agent-engine"
import { Effect, Redacted, Schema } from "effect"
import JSON5 from "json5"
import { randomBytes } from "node:crypto"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import * as HomeFiles from "./HomeFiles.ts"

/** Agent ids become directory names, so only plain names are accepted. */
export const isSafeAgentId = (agentId: string) => /^(?!\.{1,2}$)[A-Za-z0-9._-]{1,128}$/.test(agentId)

/** OpenClaw derives ports up to base+110 from the gateway port (browser control, CDP), so blocks are 120 apart. */
export const portSpacing = 120

/** What Cairn keeps next to the engine's own files. */
export const AgentMeta = Schema.Struct({ version: Schema.String, slot: Schema.Int })
export type AgentMeta = typeof AgentMeta.Type
const decodeMeta = Schema.decodeUnknownSync(Schema.fromJsonString(AgentMeta))

/** The environment every OpenClaw invocation gets, so that nothing reaches outside the loopback (§1). */
const offlineEnv = {
  OPENCLAW_NO_AUTO_UPDATE: "1",
  DO_NOT_TRACK: "1",
  OPENCLAW_DISABLE_BONJOUR: "1",
  OPENCLAW_OFFLINE: "1",
  OPENCLAW_TELEMETRY_ENDPOINT: "http://127.0.0.1:9/api/latest-version",
  CLAWHUB_DISABLE_TELEMETRY: "1"
}

export const stateDir = (home: string) => Path.join(home, ".openclaw")
export const configPath = (home: string) => Path.join(stateDir(home), "openclaw.json")
export const logPath = (home: string) => Path.join(stateDir(home), "logs", "openclaw.log")
/** The agent's workspace: OpenClaw's default, `<state>/workspace` (no `agents.defaults.workspace` in the config). */
export const workspaceDir = (home: string) => Path.join(stateDir(home), "workspace")
/** The config, relative to the home (as HomeFiles takes paths). */
export const configRelative = ".openclaw/openclaw.json"
const logsRelative = ".openclaw/logs"
/** Where earlier Cairns kept the metadata, in the home (migrated, see readMeta). */
const legacyMetaRelative = "cairn-agent.json"

/** Cairn's own folder for an agent, beside the homes: `<dataDir>/agents-meta/<agentId>` for `<dataDir>/agents/<agentId>`. */
export const metaDirOf = (home: string) => Path.join(Path.dirname(Path.dirname(home)), "agents-meta", Path.basename(home))
const metaPath = (metaDir: string) => Path.join(metaDir, "engine.json")
/** An engine version read from an old home: a plain name (it becomes a folder name under the engines). */
const isPlainVersion = (version: string) => /^[0-9A-Za-z][0-9A-Za-z.+_-]{0,63}$/.test(version) && !version.includes("..")

/**
 * The minimal offline config of §2.1, with the settings Cairn owns; the token is a reference to the environment,
 * never the secret itself.
 */
export const offlineConfig = (home: string, port: number, origins: ReadonlyArray<string> = []) =>
  withOwnedSettings({
    gateway: { mode: "local", port, bind: "loopback", auth: { mode: "token", token: "${OPENCLAW_GATEWAY_TOKEN}" } },
    update: { checkOnStart: false },
    telemetry: { enabled: false },
    discovery: { mdns: { mode: "off" } },
    models: { catalogRefresh: { enabled: false } },
    logging: { file: logPath(home) }
  }, home, port, origins)

/**
 * The browser origins of an agent's own host (`<agentId>.<agentsDomain>`, decision 0046), which its gateway's
 * Control UI is opened from through Cairn: https and http, without a port and with each of `ports` (the ports Cairn
 * is reached on directly, such as its own in development).
 */
export const agentHostOrigins = (agentId: string, agentsDomain: string | undefined, ports: ReadonlyArray<number> = []) => {
  const domain = agentsDomain?.trim().toLowerCase().replace(/\.$/, "")
  if (domain === undefined || domain === "") return []
  const host = `${agentId.toLowerCase()}.${domain}`
  return [`https://${host}`, `http://${host}`, ...ports.flatMap((port) => [`https://${host}:${port}`, `http://${host}:${port}`])]
}

/**
 * The origin the agent's host is published at, for the gateway's `publicOrigin` (its OAuth callbacks and links): the
 * host's https origin without a port (Caddy in front, decision 0046), unless the domain is a development one
 * (`localhost` or under it, served over plain http), where OpenClaw would take only a literal loopback host anyway.
 */
export const agentPublicOrigin = (origins: ReadonlyArray<string>): string | undefined => {
  const origin = origins.find((o) => o.startsWith("https://") && !/:\d+$/.test(o))
  if (origin === undefined) return undefined
  const host = new URL(origin).hostname
  return host === "localhost" || host.endsWith(".localhost") ? undefined : origin
}

/**
 * The settings Cairn owns in an agent's config, which users cannot change through the config operations and which
 * every provision applies again: how the gateway listens and authenticates (mode, port, bind address, token
 * reference: Cairn's supervision and RPC client depend on them) and where it logs (inside the agent's home, which
 * is what its sandbox lets it write). The offline switches of `offlineConfig` are defaults of a new home only:
 * a user may change them.
 */
export const ownedSettings = (
  home: string,
  port: number,
  origins: ReadonlyArray<string> = []
): ReadonlyArray<{ readonly path: ReadonlyArray<string>; readonly value: unknown }> => [
  { path: ["gateway", "mode"], value: "local" },
  { path: ["gateway", "port"], value: port },
  { path: ["gateway", "bind"], value: "loopback" },
  { path: ["gateway", "auth", "mode"], value: "token" },
  { path: ["gateway", "auth", "token"], value: "${OPENCLAW_GATEWAY_TOKEN}" },
  // The agent's own host (decision 0046): the OpenAI-compatible endpoints on, Cairn's proxy (on loopback, or the
  // connector into the agent's network) trusted for the client's address, and the host's origins allowed to open
  // the Control UI's WebSocket.
  { path: ["gateway", "http", "endpoints", "chatCompletions", "enabled"], value: true },
  { path: ["gateway", "http", "endpoints", "responses", "enabled"], value: true },
  { path: ["gateway", "trustedProxies"], value: ["127.0.0.1", "::1"] },
  ...(origins.length === 0 ? [] : [{ path: ["gateway", "controlUi", "allowedOrigins"], value: [...origins] }]),
  ...publicOriginSetting(origins),
  { path: ["logging", "file"], value: logPath(home) }
]

const publicOriginSetting = (origins: ReadonlyArray<string>) => {
  const origin = agentPublicOrigin(origins)
  return origin === undefined ? [] : [{ path: ["gateway", "publicOrigin"], value: origin }]
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** `config` with every owned setting set to Cairn's value (objects on the way created or replaced as needed). */
export const withOwnedSettings = (
  config: Record<string, unknown>,
  home: string,
  port: number,
  origins: ReadonlyArray<string> = []
): Record<string, unknown> => {
  const result = structuredClone(config)
  for (const { path, value } of ownedSettings(home, port, origins)) {
    let node = result
    for (const key of path.slice(0, -1)) {
      const next = node[key]
      node = isRecord(next) ? next : (node[key] = {})
    }
    node[path[path.length - 1]!] = value
  }
  return result
}

/** Writes `text` to `path` atomically: a private temporary file beside it, renamed over (Cairn's own folders only). */
const writeFileAtomically = async (path: string, text: string) => {
  const temporary = `${path}.cairn-${randomBytes(6).toString("hex")}`
  try {
    await Fs.writeFile(temporary, text, { flag: "wx", mode: 0o600 })
    await Fs.rename(temporary, path)
  } catch (error) {
    await Fs.rm(temporary, { force: true }).catch(() => undefined)
    throw error
  }
}

/**
 * Writes the config and the metadata; the engine's own state next to them is left alone. A new home gets the
 * offline config; an existing one keeps the user's settings (runtime config written through Cairn or the engine)
 * with Cairn's owned settings applied again. A config that is not a JSON5 object is kept aside as
 * `openclaw.json.cairn-unreadable-<time>` and replaced by the offline config: the gateway could not start with it.
 * A symlink (or other non-plain entry) on the way fails the write (HomeTampered as the cause): nothing is written
 * through it.
 */
export const write = (home: string, metaDir: string, meta: AgentMeta, port: number, origins: ReadonlyArray<string> = []) =>
  Effect.tryPromise({
    try: async () => {
      // The home is Cairn's path (the agent cannot replace it); what is under it is the agent's.
      await Fs.mkdir(home, { recursive: true, mode: 0o755 })
      await HomeFiles.withDir(home, logsRelative, true, async () => undefined)
      const existing = await HomeFiles.readText(home, configRelative)
      let config: Record<string, unknown> = offlineConfig(home, port, origins)
      if (existing !== undefined) {
        let parsed: unknown
        try {
          parsed = JSON5.parse(existing)
        } catch {
          parsed = undefined
        }
        if (isRecord(parsed)) config = withOwnedSettings(parsed, home, port, origins)
        else await HomeFiles.renameIn(home, ".openclaw", "openclaw.json", `openclaw.json.cairn-unreadable-${Date.now()}`)
      }
      const text = JSON.stringify(config, null, 2) + "\n"
      if (text !== existing) await HomeFiles.writeText(home, configRelative, text)
      await writeMeta(metaDir, meta)
    },
    catch: (cause) => new EngineUnavailable({ cause })
  })

const writeMeta = async (metaDir: string, meta: AgentMeta) => {
  await Fs.mkdir(metaDir, { recursive: true, mode: 0o700 })
  await writeFileAtomically(metaPath(metaDir), JSON.stringify(meta) + "\n")
}

export const persistMeta = (metaDir: string, meta: AgentMeta) => Effect.promise(() => writeMeta(metaDir, meta))

const decodeOrUndefined = (text: string | undefined) => {
  if (text === undefined) return undefined
  try {
    return decodeMeta(text)
  } catch {
    return undefined
  }
}

/**
 * The metadata an earlier run left in Cairn's folder, if any (unreadable counts as none). Without one, an old home's
 * `cairn-agent.json` is migrated: read through HomeFiles (a symlink or anything but a regular file is ignored), kept
 * only with a plain version, written to Cairn's folder, and removed from the home. After that the home's copy is
 * never read again.
 */
export const readMeta = (home: string, metaDir: string) =>
  Effect.promise(async () => {
    const own = decodeOrUndefined(await Fs.readFile(metaPath(metaDir), "utf8").catch(() => undefined))
    if (own !== undefined) return own
    const legacy = decodeOrUndefined(await HomeFiles.readText(home, legacyMetaRelative).catch(() => undefined))
    await HomeFiles.removeFile(home, legacyMetaRelative).catch(() => undefined)
    if (legacy === undefined || !isPlainVersion(legacy.version) || legacy.slot < 0) return undefined
    await writeMeta(metaDir, legacy)
    return legacy
  })

/**
 * The environment of every OpenClaw process of an agent: `base` (a minimal one, not Cairn's: OpenClaw changes
 * behaviour under test runners' variables and must not see Cairn's secrets), the offline flags, its home and token.
 */
export const processEnv = (base: NodeJS.ProcessEnv, home: string, token: Redacted.Redacted<string>): NodeJS.ProcessEnv => ({
  ...base,
  ...offlineEnv,
  HOME: home,
  OPENCLAW_HOME: home,
  OPENCLAW_CONFIG_PATH: configPath(home),
  OPENCLAW_GATEWAY_TOKEN: Redacted.value(token)
})
