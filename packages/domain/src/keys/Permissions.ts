/**
 * Pinata's key permissions (`/v3/pinata/keys`: `{admin, resources, endpoints}`) as Cairn's scopes, and the rules for
 * a self-service key's name and use limit. `admin` asks for everything the creating key may do (the service grants
 * that); `resources` and the legacy `endpoints` map as below, and permissions for what Cairn does not have (gateways,
 * analytics, Pinata's organisation data) grant nothing. A `write` resource includes its `read`, as on Pinata.
 *
 * | Pinata | Cairn |
 * |---|---|
 * | `org:files:read` | `org:files:read` |
 * | `org:files:write` | `org:files:read`, `org:files:write` |
 * | `org:groups:read` | `org:groups:read` |
 * | `org:groups:write` | `org:groups:read`, `org:groups:write` |
 * | `org:write` (what Pinata's key endpoints ask for) | `org:keys` |
 * | `org:read`, `org:gateways:*`, `org:analytics:*` | nothing |
 * | Cairn's own scope names (`org:agents`, `org:keys`, …) | themselves |
 * | `endpoints.pinning.{pinFileToIPFS, pinJSONToIPFS, pinByHash, hashMetadata, hashPinPolicy, unpin, userPinPolicy}` | `org:files:write` |
 * | `endpoints.pinning.pinJobs`, `endpoints.data.{pinList, userPinnedDataTotal}` | `org:files:read` |
 */
import { Result, Schema } from "effect"
import { ValidationFailed } from "../ValidationFailed.ts"
import { Scope } from "./Events.ts"

const Flag = Schema.optionalKey(Schema.Boolean)

export const Permissions = Schema.Struct({
  admin: Flag,
  resources: Schema.optionalKey(Schema.Array(Schema.String)),
  endpoints: Schema.optionalKey(Schema.Struct({
    data: Schema.optionalKey(Schema.Struct({ pinList: Flag, userPinnedDataTotal: Flag })),
    pinning: Schema.optionalKey(Schema.Struct({
      hashMetadata: Flag,
      hashPinPolicy: Flag,
      pinByHash: Flag,
      pinFileToIPFS: Flag,
      pinJSONToIPFS: Flag,
      pinJobs: Flag,
      unpin: Flag,
      userPinPolicy: Flag
    }))
  }))
})
export type Permissions = typeof Permissions.Type

/** What the permissions ask for: everything the creator may do (`admin`), and these scopes. */
export interface Requested {
  readonly admin: boolean
  readonly scopes: ReadonlyArray<Scope>
}

const byResource: Readonly<Record<string, ReadonlyArray<Scope>>> = {
  "org:files:read": ["org:files:read"],
  "org:files:write": ["org:files:read", "org:files:write"],
  "org:groups:read": ["org:groups:read"],
  "org:groups:write": ["org:groups:read", "org:groups:write"],
  "org:write": ["org:keys"],
  "org:read": [],
  "org:gateways:read": [],
  "org:gateways:write": [],
  "org:analytics:read": [],
  "org:analytics:write": []
}

const isScope = Schema.is(Scope)

const writeEndpoints = ["pinFileToIPFS", "pinJSONToIPFS", "pinByHash", "hashMetadata", "hashPinPolicy", "unpin", "userPinPolicy"] as const

/** Cairn's scopes for Pinata's permissions; a resource that is neither Pinata's nor Cairn's is refused (400). */
export const requested = (permissions: Permissions): Result.Result<Requested, ValidationFailed> => {
  const scopes = new Set<Scope>()
  for (const resource of permissions.resources ?? []) {
    const mapped = byResource[resource] ?? (isScope(resource) ? [resource] : undefined)
    if (mapped === undefined) {
      return Result.fail(new ValidationFailed({ detail: `permissions.resources: ${JSON.stringify(resource)} is not a resource permission` }))
    }
    for (const scope of mapped) scopes.add(scope)
  }
  const pinning = permissions.endpoints?.pinning ?? {}
  const data = permissions.endpoints?.data ?? {}
  if (writeEndpoints.some((endpoint) => pinning[endpoint] === true)) scopes.add("org:files:write")
  if (pinning.pinJobs === true || data.pinList === true || data.userPinnedDataTotal === true) scopes.add("org:files:read")
  const admin = permissions.admin === true
  if (!admin && scopes.size === 0) {
    return Result.fail(new ValidationFailed({ detail: "permissions grant nothing Cairn has: give admin, resources or endpoints" }))
  }
  // In the order Cairn lists its scopes, so the same permissions always give the same key.
  return Result.succeed({ admin, scopes: Scope.literals.filter((scope) => scopes.has(scope)) })
}

/** Pinata's pinning endpoints a key's scopes allow, as its key list reports them. */
export const pinningOf = (scopes: ReadonlyArray<string>) => ({
  pinFileToIPFS: scopes.includes("org:files:write"),
  pinJSONToIPFS: scopes.includes("org:files:write")
})

export const maxKeyNameLength = 255

const control = /[\u0000-\u001f\u007f]/

export const validateKeyName = (name: string): Result.Result<string, ValidationFailed> => {
  if (name.trim() === "") return Result.fail(new ValidationFailed({ detail: "keyName must not be blank" }))
  if ([...name].length > maxKeyNameLength) return Result.fail(new ValidationFailed({ detail: `keyName must be at most ${maxKeyNameLength} characters` }))
  if (control.test(name)) return Result.fail(new ValidationFailed({ detail: "keyName must not contain control characters" }))
  return Result.succeed(name)
}

/**
 * The most uses a key may be limited to. Each use is an event on the key's stream, which is read to decide the
 * next: a limit keeps that read short.
 */
export const maxUsesLimit = 1000

export const validateMaxUses = (maxUses: number): Result.Result<number, ValidationFailed> =>
  Number.isInteger(maxUses) && maxUses >= 1 && maxUses <= maxUsesLimit
    ? Result.succeed(maxUses)
    : Result.fail(new ValidationFailed({ detail: `maxUses must be a whole number from 1 to ${maxUsesLimit}` }))
