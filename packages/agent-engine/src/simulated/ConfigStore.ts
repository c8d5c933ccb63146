/**
 * The simulated engine's runtime config of one agent: the JSON document OpenClaw would keep in `openclaw.json`, as
 * the real adapter writes it at provisioning (AgentHome's `offlineConfig`), with the gateway token held as a value.
 * Reads redact credentials as OpenClaw's `config.get` does (concrete strings at sensitive paths become
 * `RedactedMarker`; `${VAR}` references stay); writes put back the stored value where the marker returns, keep the
 * settings Cairn owns, and are hashed so that a write naming an older version can be refused.
 */
import { RedactedMarker, type ConfigIssue } from "../WorkspaceOperations.ts"
import * as Sha256 from "./Sha256.ts"

type Json = Readonly<Record<string, unknown>>

/** A version of the config: the document, the text it is stored as, and that text's hash. */
export interface StoredConfig {
  readonly config: Json
  readonly text: string
  readonly hash: string
}

/** Stores a document: pretty-printed JSON, as OpenClaw writes its config, hashed over those bytes. */
export const store = (config: Json): StoredConfig => {
  const text = `${JSON.stringify(config, null, 2)}\n`
  return { config: JSON.parse(text), text, hash: `sha256:${Sha256.ofText(text)}` }
}

export interface InitialOptions {
  /** The agent's home (OPENCLAW_HOME); the log file lives under it. */
  readonly home: string
  readonly port: number
  readonly token: string
}

/** The config an agent starts with: the real adapter's offline config, the token held as a value. */
export const initial = (options: InitialOptions): StoredConfig =>
  store({
    gateway: {
      mode: "local",
      port: options.port,
      bind: "loopback",
      auth: { mode: "token", token: options.token },
      http: { endpoints: { chatCompletions: { enabled: true }, responses: { enabled: true } } },
      trustedProxies: ["127.0.0.1", "::1"]
    },
    update: { checkOnStart: false },
    telemetry: { enabled: false },
    discovery: { mdns: { mode: "off" } },
    models: { catalogRefresh: { enabled: false } },
    logging: { file: `${options.home}/.openclaw/logs/gateway.log` }
  })

/**
 * The settings Cairn owns, as the real adapter owns them (its AgentHome.ownedSettings): a write may leave them out
 * (they are kept) but not change them.
 */
export const ownedPaths: ReadonlyArray<string> = [
  "gateway.mode",
  "gateway.port",
  "gateway.bind",
  "gateway.auth.mode",
  "gateway.auth.token",
  "gateway.http.endpoints.chatCompletions.enabled",
  "gateway.http.endpoints.responses.enabled",
  "gateway.trustedProxies",
  "logging.file"
]

const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value)

const whitelistedSuffixes = [
  "maxtokens", "maxoutputtokens", "maxinputtokens", "maxcompletiontokens", "contexttokens", "totaltokens", "tokencount",
  "tokenlimit", "tokenbudget", "passwordfile"
]
const sensitivePatterns = [/token$/i, /password/i, /secret/i, /api.?key/i, /encrypt.?key/i, /private.?key/i, /serviceaccount(?:ref)?$/i]

/** OpenClaw's rule for which config paths hold credentials (its `isSensitiveConfigPath`), on dotted paths. */
export const isSensitivePath = (path: string): boolean => {
  const plain = path.replace(/\[\d*\]$/, "")
  const lower = plain.toLowerCase()
  return lower.includes("localservice.env.") ||
    (!whitelistedSuffixes.some((suffix) => lower.endsWith(suffix)) && sensitivePatterns.some((pattern) => pattern.test(plain)))
}

/** A credential OpenClaw redacts: a non-empty string that is not a `${VAR}` reference. */
const isConcrete = (value: string) => value.trim() !== "" && !/^\$\{[^}]*\}$/.test(value.trim())

const join = (prefix: string, key: string) => (prefix === "" ? key : `${prefix}.${key}`)

const redactValue = (value: unknown, path: string): unknown => {
  if (typeof value === "string") return path !== "" && isSensitivePath(path) && isConcrete(value) ? RedactedMarker : value
  if (Array.isArray(value)) return value.map((item, index) => redactValue(item, `${path}[${index}]`))
  if (isObject(value)) return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, redactValue(item, join(path, key))]))
  return value
}

/** The document as a read shows it: every credential replaced by the marker. */
export const redact = (config: Json): Json => redactValue(config, "") as Json

const at = (value: unknown, key: string | number): unknown =>
  typeof key === "number" ? (Array.isArray(value) ? value[key] : undefined) : isObject(value) ? value[key] : undefined

const restoreValue = (value: unknown, original: unknown, path: string, issues: Array<ConfigIssue>): unknown => {
  if (value === RedactedMarker) {
    const label = path === "" ? "<root>" : path
    if (path !== "" && isSensitivePath(path) && typeof original === "string" && original !== RedactedMarker) return original
    issues.push({
      path: label,
      message: isSensitivePath(path) && original === undefined
        ? `Sentinel value "${RedactedMarker}" in key ${label} is not valid as real data`
        : `Reserved redaction sentinel "${RedactedMarker}" is not valid config data (${label}).`
    })
    return value
  }
  if (Array.isArray(value)) return value.map((item, index) => restoreValue(item, at(original, index), `${path}[${index}]`, issues))
  if (isObject(value)) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, restoreValue(item, at(original, key), join(path, key), issues)]))
  }
  return value
}

/**
 * A written document with the marker replaced by the stored value at the same path. A marker with nothing stored
 * to stand for, or outside a credential's path, is an issue, as OpenClaw refuses it.
 */
export const restore = (
  candidate: Json,
  stored: Json
): { readonly config: Json; readonly issues: ReadonlyArray<ConfigIssue> } => {
  const issues: Array<ConfigIssue> = []
  const config = restoreValue(candidate, stored, "", issues) as Json
  return { config, issues }
}

const valueAt = (config: unknown, path: string): unknown => path.split(".").reduce<unknown>((value, key) => at(value, key), config)
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b)

/** Sets `path` in a copy of `config`, creating the objects on the way; undefined when one on the way is no object. */
const setAt = (config: Json, path: ReadonlyArray<string>, value: unknown): Json | undefined => {
  const [key, ...rest] = path
  if (key === undefined) return config
  if (rest.length === 0) return { ...config, [key]: value }
  const inner = config[key] === undefined ? {} : config[key]
  if (!isObject(inner)) return undefined
  const updated = setAt(inner, rest, value)
  return updated === undefined ? undefined : { ...config, [key]: updated }
}

/**
 * Keeps the settings Cairn owns: those a write leaves out get their stored values back; `changed` names those it
 * sets to anything else. Where a setting's parent is no object, the validator has the last word.
 */
export const keepOwned = (candidate: Json, stored: Json): { readonly config: Json; readonly changed: ReadonlyArray<string> } => {
  let config = candidate
  const changed: Array<string> = []
  for (const path of ownedPaths) {
    const current = valueAt(stored, path)
    const given = valueAt(config, path)
    if (given === undefined) {
      if (current !== undefined) config = setAt(config, path.split("."), current) ?? config
    } else if (!same(given, current)) {
      changed.push(path)
    }
  }
  return { config, changed }
}

/** The stored config with a new gateway token (a rotation). */
export const withToken = (stored: StoredConfig, token: string): StoredConfig =>
  store(setAt(stored.config, ["gateway", "auth", "token"], token) ?? stored.config)
