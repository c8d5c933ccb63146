/**
 * The rules on what clients send the runtime-config endpoints, and what a write changed. A config is a JSON object,
 * given as such or as a string holding one (Pinata's validate takes `{config: "<json string>"}`); anything else, a
 * body that is not JSON included, is `Invalid JSON`. Whether the object is a valid config is the engine's to say.
 */
import { Result } from "effect"
import { ValidationFailed } from "../ValidationFailed.ts"
import { InvalidJson } from "./Errors.ts"

export type ConfigObject = Readonly<Record<string, unknown>>

export interface ConfigWrite {
  readonly config: ConfigObject
  readonly baseHash?: string
}

const isObject = (value: unknown): value is ConfigObject =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const parseJson = (text: string, what: string): Result.Result<unknown, InvalidJson> => {
  try {
    return Result.succeed(JSON.parse(text))
  } catch {
    return Result.fail(new InvalidJson({ detail: `${what} is not valid JSON` }))
  }
}

/** A `config` field: an object, or a string holding one. */
export const configOf = (value: unknown): Result.Result<ConfigObject, InvalidJson> => {
  if (value === undefined) return Result.fail(new InvalidJson({ detail: "config is required" }))
  const parsed = typeof value === "string" ? parseJson(value, "config") : Result.succeed(value)
  return Result.flatMap(parsed, (config) =>
    isObject(config) ? Result.succeed(config) : Result.fail(new InvalidJson({ detail: "config must be a JSON object" })))
}

const bodyOf = (text: string): Result.Result<ConfigObject, InvalidJson> =>
  Result.flatMap(parseJson(text, "the request body"), (body) =>
    isObject(body) ? Result.succeed(body) : Result.fail(new InvalidJson({ detail: "the request body must be a JSON object" })))

/** The body of a validate: `{config}`. */
export const parseCandidate = (text: string): Result.Result<ConfigObject, InvalidJson> =>
  Result.flatMap(bodyOf(text), (body) => configOf(body["config"]))

/** The body of a write: `{config, baseHash?}`; a `baseHash` that is there must be a non-empty string. */
export const parseWrite = (text: string): Result.Result<ConfigWrite, InvalidJson | ValidationFailed> =>
  Result.flatMap(bodyOf(text), (body): Result.Result<ConfigWrite, InvalidJson | ValidationFailed> => {
    const baseHash = body["baseHash"]
    if (baseHash !== undefined && baseHash !== null && (typeof baseHash !== "string" || baseHash === "")) {
      return Result.fail(new ValidationFailed({ detail: "baseHash must be a non-empty string" }))
    }
    return Result.map(configOf(body["config"]), (config) =>
      typeof baseHash === "string" ? { config, baseHash } : { config })
  })

/** Deep equality of two JSON values (key order does not matter). */
export const sameJson = (a: unknown, b: unknown): boolean => {
  if (a === b) return true
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((item, i) => sameJson(item, b[i]))
  }
  if (!isObject(a) || !isObject(b)) return false
  const keys = Object.keys(a)
  return keys.length === Object.keys(b).length && keys.every((key) => Object.hasOwn(b, key) && sameJson(a[key], b[key]))
}

/**
 * The top-level keys whose values differ between two configs, sorted: what an audit event records of a write
 * (values may be credentials, so they are never recorded). A credential written back as the redacted marker it was
 * read as is no change.
 */
export const changedPaths = (before: ConfigObject, after: ConfigObject): ReadonlyArray<string> =>
  [...new Set([...Object.keys(before), ...Object.keys(after)])]
    .filter((key) => !(Object.hasOwn(before, key) && Object.hasOwn(after, key) && sameJson(before[key], after[key])))
    .sort()
