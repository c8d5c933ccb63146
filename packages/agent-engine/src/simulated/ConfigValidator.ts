/**
 * The simulated engine's config validator: what `openclaw config validate --json` (2026.9.6) answers, for the parts
 * of OpenClaw's schema a simulation needs. The top level is strict with OpenClaw's own list of keys (copied from
 * `openclaw config schema`), each with its JSON type; `gateway` and `gateway.auth` are strict too, with the types of
 * the settings Cairn writes there. Sections below that are only checked to be objects: the simulation does not copy
 * OpenClaw's 2.4 MB schema. Messages and their order are OpenClaw's (zod's): an object's properties in schema order,
 * then its unrecognized keys.
 */
import type { ConfigIssue, ConfigValidation } from "../WorkspaceOperations.ts"

type JsonType = "object" | "string" | "boolean" | "array"

/** OpenClaw 2026.9.6's top-level config keys, in schema order, with their types. */
export const topLevelKeys: ReadonlyArray<readonly [string, JsonType]> = [
  ["$schema", "string"],
  ["meta", "object"],
  ["env", "object"],
  ["wizard", "object"],
  ["diagnostics", "object"],
  ["logging", "object"],
  ["update", "object"],
  ["telemetry", "object"],
  ["browser", "object"],
  ["ui", "object"],
  ["secrets", "object"],
  ["auth", "object"],
  ["accessGroups", "object"],
  ["acp", "object"],
  ["models", "object"],
  ["nodeHost", "object"],
  ["agents", "object"],
  ["worktreeRoot", "string"],
  ["worktreeAcceleration", "boolean"],
  ["tools", "object"],
  ["security", "object"],
  ["bindings", "array"],
  ["broadcast", "object"],
  ["attachments", "object"],
  ["messages", "object"],
  ["tts", "object"],
  ["commands", "object"],
  ["approvals", "object"],
  ["session", "object"],
  ["cron", "object"],
  ["transcripts", "object"],
  ["hooks", "object"],
  ["channels", "object"],
  ["discovery", "object"],
  ["talk", "object"],
  ["gateway", "object"],
  ["cloudWorkers", "object"],
  ["desktop", "object"],
  ["memory", "object"],
  ["mcp", "object"],
  ["skills", "object"],
  ["plugins", "object"],
  ["surfaces", "object"],
  ["proxy", "object"]
]

const gatewayKeys = [
  "port", "mode", "bind", "customBindHost", "publicOrigin", "portals", "controlUi", "cliAgents", "terminal", "auth", "roles",
  "trustedProxies", "allowRealIpFallback", "tools", "tailscale", "remote", "reload", "tls", "http", "push", "nodes"
]
const authKeys = ["mode", "token", "password", "allowTailscale", "identityScopes", "rateLimit", "trustedProxy"]

/** zod's name for what it received. */
const received = (value: unknown): string =>
  value === null ? "null" : Array.isArray(value) ? "array" : typeof value === "number" && Number.isNaN(value) ? "NaN" : typeof value

const isObject = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const hasType = (value: unknown, type: JsonType) =>
  type === "object" ? isObject(value) : type === "array" ? Array.isArray(value) : typeof value === type

const typeMessage = (type: JsonType, value: unknown) =>
  `Invalid input: expected ${type}, received ${received(value)}${type === "boolean" ? " (allowed: true, false)" : ""}`

const oneOf = (allowed: ReadonlyArray<string>) => `Invalid input (allowed: ${allowed.map((value) => JSON.stringify(value)).join(", ")})`

const unrecognized = (keys: ReadonlyArray<string>) =>
  keys.length === 1
    ? `Unrecognized key: ${JSON.stringify(keys[0])}`
    : `Unrecognized keys: ${keys.map((key) => JSON.stringify(key)).join(", ")}`

const checkUnknownKeys = (object: Readonly<Record<string, unknown>>, known: ReadonlyArray<string>, path: string, issues: Array<ConfigIssue>) => {
  const unknown = Object.keys(object).filter((key) => !known.includes(key))
  if (unknown.length > 0) issues.push({ path, message: unrecognized(unknown) })
}

const checkEnum = (object: Readonly<Record<string, unknown>>, key: string, allowed: ReadonlyArray<string>, path: string, issues: Array<ConfigIssue>) => {
  const value = object[key]
  if (value !== undefined && !(typeof value === "string" && allowed.includes(value))) issues.push({ path, message: oneOf(allowed) })
}

const checkPort = (value: unknown, issues: Array<ConfigIssue>) => {
  const path = "gateway.port"
  if (value === undefined) return
  if (typeof value !== "number" || Number.isNaN(value)) {
    issues.push({ path, message: `Invalid input: expected number, received ${received(value)}` })
  } else if (!Number.isInteger(value)) {
    issues.push({ path, message: "Invalid input: expected int, received number" })
  } else if (value < 1) {
    issues.push({ path, message: "Too small: expected number to be >=1 (minimum: 1)" })
  } else if (value > 65535) {
    issues.push({ path, message: "Too big: expected number to be <=65535 (maximum: 65535)" })
  }
}

const checkAuth = (auth: unknown, issues: Array<ConfigIssue>) => {
  if (auth === undefined) return
  if (!isObject(auth)) return void issues.push({ path: "gateway.auth", message: typeMessage("object", auth) })
  checkEnum(auth, "mode", ["none", "token", "password", "trusted-proxy"], "gateway.auth.mode", issues)
  // A token is a string or a SecretRef object ({source, provider, id}).
  const token = auth["token"]
  if (token !== undefined && typeof token !== "string" && !(isObject(token) && typeof token["source"] === "string")) {
    issues.push({ path: "gateway.auth.token", message: "Invalid input" })
  }
  checkUnknownKeys(auth, authKeys, "gateway.auth", issues)
}

const checkGateway = (gateway: Readonly<Record<string, unknown>>, issues: Array<ConfigIssue>) => {
  checkPort(gateway["port"], issues)
  checkEnum(gateway, "mode", ["local", "remote"], "gateway.mode", issues)
  checkEnum(gateway, "bind", ["auto", "lan", "loopback", "custom", "tailnet"], "gateway.bind", issues)
  checkAuth(gateway["auth"], issues)
  checkUnknownKeys(gateway, gatewayKeys, "gateway", issues)
}

/** The issues OpenClaw's validator finds in a candidate config (a parsed JSON value); none for a valid one. */
export const issuesOf = (config: unknown): ReadonlyArray<ConfigIssue> => {
  if (!isObject(config)) return [{ path: "<root>", message: typeMessage("object", config) }]
  const issues: Array<ConfigIssue> = []
  for (const [key, type] of topLevelKeys) {
    const value = config[key]
    if (value === undefined) continue
    if (!hasType(value, type)) issues.push({ path: key, message: typeMessage(type, value) })
    else if (key === "gateway") checkGateway(value as Readonly<Record<string, unknown>>, issues)
  }
  checkUnknownKeys(config, topLevelKeys.map(([key]) => key), "<root>", issues)
  return issues
}

/** What the validator answers: valid or not, the issues, and what it printed for people (as its CLI prints it). */
export const validate = (config: unknown, path: string): ConfigValidation => {
  const issues = issuesOf(config)
  return {
    valid: issues.length === 0,
    issues,
    output: issues.length === 0
      ? `Config valid: ${path}`
      : [`Config invalid: ${path}`, ...issues.map((issue) => `  × ${issue.path}: ${issue.message}`)].join("\n")
  }
}
