/**
 * An agent's runtime config, `<home>/.openclaw/openclaw.json` (reference features §3), read, validated and written
 * for the AgentEngine port: through the running gateway's RPC (`config.get`, `config.set`), or the file while it is
 * stopped.
 *
 * What users see is the config as written in the file (JSON5 as JSON; `${VAR}` references and `$include`s kept as
 * they are, not their resolved values), with credentials replaced by the engine's redaction marker:
 * - while running, by the engine itself (`config.get`'s `parsed`, redacted with its schema's hints);
 * - while stopped, by the same path rule the engine falls back to without hints (`isSensitiveConfigPath` in its
 *   `sensitive-paths`: keys ending in `token`, containing `password`, `secret`, `api key`, … except counters such as
 *   `maxTokens`; SecretRef ids; whole service-account objects), applied to both states on top;
 * - the gateway token Cairn manages always (the file holds only `${OPENCLAW_GATEWAY_TOKEN}`, but it is a credential
 *   users do not own).
 * A marker written back keeps the stored value at that path.
 *
 * The hash is Cairn's own, one scheme whatever the state: `sha256:` and the hex SHA-256 of the file's text. The
 * engine's `config.get` hash is an HMAC keyed by its private state and cannot be computed while it is stopped, so a
 * write while running checks Cairn's hash first and then hands the engine its own base hash (read just before).
 *
 * Settings Cairn owns (AgentHome.ownedSettings: the gateway's mode, port, bind address, auth mode and token, the log
 * file, and what the agent's own host needs: the OpenAI-compatible endpoints, trusted proxies, allowed origins)
 * cannot be changed: a candidate that leaves one out gets Cairn's value back, one that sets another value is refused
 * (ConfigSettingOwned).
 *
 * Validation is the engine's own: `openclaw config validate --json` on a temporary file (1.4–3.4 s, a cold CLI), or,
 * for writes while running, `config.set` itself, which validates with the same validator before writing and answers
 * an invalid config in 20–60 ms with the same issues; there is no validate-only RPC.
 */
import {
  ConfigChanged,
  ConfigRejected,
  ConfigSettingOwned,
  type ConfigIssue,
  ConfigUnreadable,
  ConfigUnwritable,
  type ConfigValidation,
  type ConfigWrite,
  type EngineConfig,
  RedactedMarker,
  ValidatorFailed
} from "@cairn/agent-engine"
import { Effect } from "effect"
import JSON5 from "json5"
import { createHash, randomBytes } from "node:crypto"
import { isDeepStrictEqual } from "node:util"
import * as AgentHome from "./AgentHome.ts"
import * as HomeFiles from "./HomeFiles.ts"
import type { GatewayRpcError } from "./GatewayRpc.ts"

/** What the config operations need of one agent; the adapter builds it. */
export interface ConfigTarget {
  readonly agentId: string
  readonly home: string
  readonly port: number
  /** The browser origins of the agent's own host, which its owned settings allow (AgentHome.agentHostOrigins). */
  readonly origins?: ReadonlyArray<string>
  /** Whether the gateway is running (and its RPC to be used) right now. */
  readonly isRunning: () => boolean
  /** One RPC call on the agent's gateway (the adapter's kept-open connection). */
  readonly rpc: (method: string, params?: unknown) => Effect.Effect<unknown, GatewayRpcError>
  /**
   * Runs `openclaw config validate --json` as the agent with OPENCLAW_CONFIG_PATH set to `configPath`; fails when
   * the CLI cannot be run at all.
   */
  readonly runValidator: (configPath: string) => Effect.Effect<{ readonly code: number | null; readonly stdout: string; readonly stderr: string }, string>
}

type Json = Record<string, unknown>

const isRecord = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value)

/** Cairn's config hash: of the file's text, so it is the same whether the gateway runs or not. */
export const hashText = (text: string) => `sha256:${createHash("sha256").update(text, "utf8").digest("hex")}`

/** The engine's validator names the whole document `<root>`; its RPC says `""`. */
export const normaliseIssuePath = (path: unknown) => typeof path === "string" && path !== "" ? path : "<root>"

const toIssues = (value: unknown): Array<ConfigIssue> =>
  Array.isArray(value)
    ? value.flatMap((issue) =>
      isRecord(issue) ? [{ path: normaliseIssuePath(issue["path"]), message: String(issue["message"] ?? "invalid") }] : []
    )
    : []

// --- Redaction: OpenClaw's path rule (src/config/sensitive-paths.ts and redact-snapshot.ts, 2026.9) ---

const nonSensitiveSuffixes = [
  "maxtokens",
  "maxoutputtokens",
  "maxinputtokens",
  "maxcompletiontokens",
  "contexttokens",
  "totaltokens",
  "tokencount",
  "tokenlimit",
  "tokenbudget",
  "passwordfile"
]
const sensitivePatterns = [/token$/i, /password/i, /secret/i, /api.?key/i, /encrypt.?key/i, /private.?key/i, /serviceaccount(?:ref)?$/i]

export const isSensitivePath = (path: string): boolean => {
  const bare = path.endsWith("[]") ? path.slice(0, -2) : path
  const lower = bare.toLowerCase()
  return lower.includes("localservice.env.") ||
    (!nonSensitiveSuffixes.some((suffix) => lower.endsWith(suffix)) && sensitivePatterns.some((pattern) => pattern.test(bare)))
}

/** A value worth hiding: not empty and not a `${VAR}` reference (which names a secret without holding it). */
const isConcreteSecret = (value: string) => value.trim() !== "" && !/^\$\{[^}]*\}$/.test(value.trim())

const isSecretRef = (value: Json) => typeof value["source"] === "string" && typeof value["id"] === "string"

const redactValue = (value: unknown, path: string): unknown => {
  if (Array.isArray(value)) {
    const itemPath = `${path}[]`
    return value.map((item) =>
      typeof item === "string" && isConcreteSecret(item) && isSensitivePath(itemPath) ? RedactedMarker : redactValue(item, itemPath)
    )
  }
  if (!isRecord(value)) return value
  const result: Json = {}
  for (const [key, item] of Object.entries(value)) {
    const itemPath = path === "" ? key : `${path}.${key}`
    const sensitive = isSensitivePath(itemPath)
    if (typeof item === "string" && sensitive && isConcreteSecret(item)) {
      result[key] = RedactedMarker
    } else if (sensitive && isRecord(item) && isSecretRef(item)) {
      result[key] = isConcreteSecret(item["id"] as string) ? { ...item, id: RedactedMarker } : item
    } else if (sensitive && isRecord(item) && /serviceaccount(?:ref)?$/i.test(itemPath)) {
      result[key] = RedactedMarker
    } else {
      result[key] = redactValue(item, itemPath)
    }
  }
  return result
}

/** The config as users see it: credentials by the engine's path rule, and the gateway token, as the marker. */
export const redact = (config: Json): Json => {
  const result = redactValue(config, "") as Json
  const gateway = result["gateway"]
  const auth = isRecord(gateway) ? gateway["auth"] : undefined
  if (isRecord(gateway) && isRecord(auth) && auth["token"] !== undefined) {
    result["gateway"] = { ...gateway, auth: { ...auth, token: RedactedMarker } }
  }
  return result
}

/** `candidate` with every marker replaced by the stored value at the same path; paths with none are listed. */
export const restoreRedacted = (candidate: unknown, stored: unknown): { readonly config: unknown; readonly missing: Array<string> } => {
  const missing: Array<string> = []
  const walk = (value: unknown, original: unknown, path: string): unknown => {
    if (value === RedactedMarker) {
      if (original === undefined || original === RedactedMarker) missing.push(path === "" ? "<root>" : path)
      return original
    }
    if (Array.isArray(value)) {
      return value.map((item, index) => walk(item, Array.isArray(original) ? original[index] : undefined, `${path}[${index}]`))
    }
    if (!isRecord(value)) return value
    return Object.fromEntries(
      Object.entries(value).map((
        [key, item]
      ) => [key, walk(item, isRecord(original) ? original[key] : undefined, path === "" ? key : `${path}.${key}`)])
    )
  }
  return { config: walk(candidate, stored, ""), missing }
}

/**
 * The candidate with Cairn's owned settings in place: missing ones filled in, and the paths of those it sets to
 * another value (refused).
 */
export const applyOwnedSettings = (
  candidate: Json,
  home: string,
  port: number,
  origins: ReadonlyArray<string> = []
): { readonly config: Json; readonly changed: Array<string> } => {
  const changed: Array<string> = []
  for (const { path, value } of AgentHome.ownedSettings(home, port, origins)) {
    let node: unknown = candidate
    for (const key of path) node = isRecord(node) ? node[key] : undefined
    if (node !== undefined && !isDeepStrictEqual(node, value)) changed.push(path.join("."))
  }
  return { config: AgentHome.withOwnedSettings(candidate, home, port, origins), changed }
}

/** The validator's `--json` answer as a ConfigValidation, or undefined when it printed none. */
export const parseValidatorOutput = (stdout: string): ConfigValidation | undefined => {
  const start = stdout.search(/^\{/m)
  if (start < 0) return undefined
  let answer: unknown
  try {
    answer = JSON.parse(stdout.slice(start))
  } catch {
    return undefined
  }
  if (!isRecord(answer) || typeof answer["valid"] !== "boolean") return undefined
  const issues = toIssues(answer["issues"])
  // A missing file or another CLI error without issues: the validator ran, but on nothing usable.
  if (!answer["valid"] && issues.length === 0) {
    const error = answer["error"]
    const message = isRecord(error) && typeof error["message"] === "string" ? error["message"] : "invalid config"
    issues.push({ path: "<root>", message })
  }
  const warnings = toIssues(answer["warnings"])
    // The CLI runs with the agent's token variable; a warning about it missing would not be about the config.
    .filter((warning) => !warning.message.includes("OPENCLAW_GATEWAY_TOKEN"))
  const output = [
    answer["valid"] ? "Config valid" : "Config invalid",
    ...issues.map((issue) => `${issue.path}: ${issue.message}`),
    ...warnings.map((warning) => `warning: ${warning.path}: ${warning.message}`)
  ].join("\n")
  return { valid: answer["valid"], issues, output }
}

/** Parses the config file's text: a JSON5 object. */
const parseText = (text: string): Json => {
  const parsed: unknown = JSON5.parse(text)
  if (!isRecord(parsed)) throw new Error("the config is not an object")
  return parsed
}

/** The config file's text, read through HomeFiles (a symlink on the way, or in the file's place, is refused). */
const readFileText = async (home: string) => {
  const text = await HomeFiles.readText(home, AgentHome.configRelative)
  if (text === undefined) throw new Error("the config file is missing")
  return text
}

const describe = (cause: unknown) => cause instanceof Error ? cause.message : String(cause)

/** The file's text and Cairn's hash of it. */
const readStored = (target: ConfigTarget) =>
  Effect.tryPromise({
    try: async () => {
      const text = await readFileText(target.home)
      return { text, hash: hashText(text), config: parseText(text) }
    },
    catch: (cause) => new ConfigUnreadable({ agentId: target.agentId, detail: describe(cause) })
  })

/**
 * `config.get` and the file's hash from the same version: the file is read before and after the call, and the call
 * repeated (a few times) if a write came in between.
 */
const getFromGateway = (target: ConfigTarget) =>
  Effect.gen(function*() {
    for (let attempt = 0; attempt < 5; attempt++) {
      const before = yield* readStored(target)
      const answer = yield* target.rpc("config.get", {}).pipe(
        Effect.mapError((error) => new ConfigUnreadable({ agentId: target.agentId, detail: `config.get: ${error.message}` }))
      )
      const after = yield* readStored(target)
      if (before.hash !== after.hash) continue
      if (!isRecord(answer) || typeof answer["hash"] !== "string") {
        return yield* new ConfigUnreadable({ agentId: target.agentId, detail: "config.get answered without a hash" })
      }
      // A file the engine finds invalid (edited by hand) comes without `parsed`: then the file, redacted by Cairn, so
      // that it can still be read and replaced.
      const parsed = isRecord(answer["parsed"]) ? answer["parsed"] : after.config
      return { stored: after, parsed, engineHash: answer["hash"] }
    }
    return yield* new ConfigUnreadable({ agentId: target.agentId, detail: "the config kept changing while it was read" })
  })

/** The runtime config, redacted, and Cairn's hash (from the running gateway, or its file while stopped). */
export const read = (target: ConfigTarget): Effect.Effect<EngineConfig, ConfigUnreadable> =>
  Effect.gen(function*() {
    if (target.isRunning()) {
      const fromGateway = yield* getFromGateway(target).pipe(
        // A gateway that stopped meanwhile: its file says the same.
        Effect.catch((error) => target.isRunning() ? Effect.fail(error) : Effect.succeed(undefined))
      )
      if (fromGateway !== undefined) return { config: redact(fromGateway.parsed), hash: fromGateway.stored.hash }
    }
    const stored = yield* readStored(target)
    return { config: redact(stored.config), hash: stored.hash }
  })

/** Writes `text` to a private temporary file in the agent's state folder, runs `use` on its path, removes it. */
const withTemporaryConfig = <A, E>(target: ConfigTarget, text: string, use: (path: string) => Effect.Effect<A, E>, onWriteFailure: (cause: unknown) => E) =>
  Effect.acquireUseRelease(
    Effect.tryPromise({
      try: async () => {
        // Beside the real file, so that relative `$include`s resolve the same way.
        const name = `openclaw.json.cairn-validate-${randomBytes(6).toString("hex")}`
        await HomeFiles.withDir(target.home, ".openclaw", false, async (folder) => {
          if (folder === undefined) throw new Error("the agent's state folder is missing")
          await HomeFiles.createIn(folder, name, text, 0o600)
        })
        return name
      },
      catch: onWriteFailure
    }),
    // The validator runs in the agent's sandbox, which sees the home at the same path.
    (name) => use(`${AgentHome.stateDir(target.home)}/${name}`),
    (name) => Effect.promise(() => HomeFiles.removeFile(target.home, `.openclaw/${name}`).catch(() => undefined))
  )

/** Runs the engine's validator (the agent's version) on a candidate: an object, or the text of one (JSON or JSON5). */
export const validate = (target: ConfigTarget, candidate: unknown): Effect.Effect<ConfigValidation, ValidatorFailed> => {
  const failed = (detail: string) => new ValidatorFailed({ agentId: target.agentId, detail })
  const text = typeof candidate === "string" ? candidate : JSON.stringify(candidate, null, 2) + "\n"
  return withTemporaryConfig(
    target,
    text,
    (path) =>
      Effect.flatMap(Effect.mapError(target.runValidator(path), failed), (result) => {
        const validation = parseValidatorOutput(result.stdout)
        return validation === undefined
          ? Effect.fail(failed((result.stderr.trim() || result.stdout.trim() || `exit code ${result.code}`).slice(0, 2_000)))
          : Effect.succeed(validation)
      }),
    (cause) => failed(`cannot write the candidate: ${describe(cause)}`)
  )
}

/** The RPC's refusal of a write as the port's error. */
const fromSetError = (agentId: string, error: GatewayRpcError) => {
  if (error.code === "INVALID_REQUEST") {
    if (/config changed since last load/i.test(error.message)) return new ConfigChanged({ agentId })
    const issues = toIssues(isRecord(error.details) ? error.details["issues"] : undefined)
    return new ConfigRejected({ agentId, issues: issues.length > 0 ? issues : [{ path: "<root>", message: error.message }] })
  }
  const retry = error.retryAfterMs !== undefined ? ` (retry after ${Math.ceil(error.retryAfterMs / 1000)} s)` : ""
  return new ConfigUnwritable({ agentId, detail: `config.set: ${error.code}: ${error.message}${retry}` })
}

/**
 * Replaces the runtime config: markers restored, owned settings checked and filled in, the base hash checked,
 * validated by the engine, then written through the running gateway (`config.set`, whose own validation stands in
 * for the CLI's) or to the file (atomically) while stopped. Callers serialise writes per agent.
 */
export const write = (
  target: ConfigTarget,
  request: ConfigWrite
): Effect.Effect<EngineConfig, ConfigRejected | ConfigChanged | ConfigSettingOwned | ConfigUnwritable | ConfigUnreadable> =>
  Effect.gen(function*() {
    const { agentId } = target
    const running = target.isRunning()
    const current = running ? yield* getFromGateway(target) : { stored: yield* readStored(target), engineHash: undefined }
    if (request.baseHash !== undefined && request.baseHash !== current.stored.hash) return yield* new ConfigChanged({ agentId })

    const restored = restoreRedacted(request.config, current.stored.config)
    const owned = applyOwnedSettings(restored.config as Json, target.home, target.port, target.origins ?? [])
    if (owned.changed.length > 0) return yield* new ConfigSettingOwned({ agentId, paths: owned.changed })
    if (restored.missing.length > 0) {
      return yield* new ConfigRejected({
        agentId,
        issues: restored.missing.map((path) => ({ path, message: `${RedactedMarker} stands for a stored value, and there is none here` }))
      })
    }
    const text = JSON.stringify(owned.config, null, 2) + "\n"

    if (running && current.engineHash !== undefined) {
      yield* target.rpc("config.set", { raw: text, baseHash: current.engineHash }).pipe(
        Effect.mapError((error) => fromSetError(agentId, error))
      )
      return yield* read(target)
    }

    const validation = yield* validate(target, text).pipe(
      Effect.mapError((error) => new ConfigUnwritable({ agentId, detail: `the validator could not run: ${error.detail}` }))
    )
    if (!validation.valid) return yield* new ConfigRejected({ agentId, issues: validation.issues })
    yield* Effect.tryPromise({
      try: async () => {
        // The file may have changed while the validator ran (an edit by hand, or by the engine).
        if (request.baseHash !== undefined && hashText(await readFileText(target.home)) !== request.baseHash) return false
        await HomeFiles.writeText(target.home, AgentHome.configRelative, text)
        return true
      },
      catch: (cause) => new ConfigUnwritable({ agentId, detail: describe(cause) })
    }).pipe(Effect.flatMap((written) => written ? Effect.void : Effect.fail(new ConfigChanged({ agentId }))))
    return { config: redact(owned.config), hash: hashText(text) }
  })
