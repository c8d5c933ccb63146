/**
 * Bearer authentication for the v3 API: the `Authorization: Bearer <API key>` header, verified by ApiKeys,
 * then the scope the route needs. Missing or bad credentials: 401; valid key without the scope: 403. A 401 says
 * why (`reason`, and RFC 6750's `WWW-Authenticate` challenge): no credentials, a header that is not `Bearer …`,
 * a token that is malformed, forged, expired, revoked, unknown or for another workspace.
 */
import { type ApiKeys, Forbidden, type Principal, Unauthorized } from "@cairn/application"
import { Effect } from "effect"
import type { HttpServerRequest } from "effect/http"

export const bearerToken = (request: HttpServerRequest.HttpServerRequest): string | undefined => {
  const header = request.headers["authorization"]
  if (header === undefined) return undefined
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header)
  return match?.[1]
}

/** The refusal of a request that brought no bearer token: none at all, or an Authorization header of another form. */
export const missingCredentials = (request: HttpServerRequest.HttpServerRequest) =>
  new Unauthorized({ reason: request.headers["authorization"] === undefined ? "missing-credentials" : "not-bearer" })

/**
 * The principal of the request's bearer API key, whatever its scopes; or, without a bearer token, of a self-service
 * key presented as its pair in the `pinata_api_key` and `pinata_secret_api_key` headers, as Pinata's legacy SDK does.
 */
export const authenticate = (keys: ApiKeys["Service"], request: HttpServerRequest.HttpServerRequest) => {
  const token = bearerToken(request)
  if (token !== undefined) return keys.authenticate(token)
  const keyId = request.headers["pinata_api_key"]
  const secret = request.headers["pinata_secret_api_key"]
  return request.headers["authorization"] === undefined && keyId !== undefined && keyId !== "" && secret !== undefined && secret !== ""
    ? keys.authenticatePair(keyId, secret)
    : Effect.fail(missingCredentials(request))
}

/** The principal, if its key has the scope (403 otherwise). */
export const withScope = (scope: string) => (principal: Principal): Effect.Effect<Principal, Forbidden> =>
  principal.scopes.includes(scope) ? Effect.succeed(principal) : Effect.fail(new Forbidden({ scope }))

// No generators on this path: every authenticated request takes it (docs/performance.md, bench:http).
export const requireScope = (keys: ApiKeys["Service"], request: HttpServerRequest.HttpServerRequest, scope: string) =>
  Effect.flatMap(authenticate(keys, request), withScope(scope))

const quoted = (value: string) => `"${value.replace(/["\\]/g, "\\$&")}"`

/**
 * The `WWW-Authenticate` challenge of a 401 (RFC 6750 section 3): without credentials, only the scheme and realm;
 * with a header of another form, `invalid_request`; with a token that was refused, `invalid_token` and why.
 */
export const challenge = (error: { readonly message: string }): string => {
  if (!(error instanceof Unauthorized)) {
    return `Bearer realm="cairn", error="invalid_token", error_description=${quoted(error.message)}`
  }
  if (error.reason === "missing-credentials") return `Bearer realm="cairn"`
  const code = error.reason === "not-bearer" ? "invalid_request" : "invalid_token"
  return `Bearer realm="cairn", error="${code}", error_description=${quoted(error.description)}`
}
