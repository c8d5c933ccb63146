/**
 * Bearer authentication for the v3 API: the `Authorization: Bearer <API key>` header, verified by ApiKeys,
 * then the scope the route needs. Missing or bad credentials: 401; valid key without the scope: 403.
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

/** The principal of the request's bearer API key, whatever its scopes. */
export const authenticate = (keys: ApiKeys["Service"], request: HttpServerRequest.HttpServerRequest) =>
  Effect.gen(function*() {
    const token = bearerToken(request)
    if (token === undefined) return yield* new Unauthorized({ reason: "no bearer token" })
    return yield* keys.authenticate(token)
  })

export const requireScope = (keys: ApiKeys["Service"], request: HttpServerRequest.HttpServerRequest, scope: string) =>
  Effect.gen(function*() {
    const principal: Principal = yield* authenticate(keys, request)
    if (!principal.scopes.includes(scope)) return yield* new Forbidden({ scope })
    return principal
  })
