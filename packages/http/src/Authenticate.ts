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

export const requireScope = (keys: ApiKeys["Service"], request: HttpServerRequest.HttpServerRequest, scope: string) =>
  Effect.gen(function*() {
    const token = bearerToken(request)
    if (token === undefined) return yield* new Unauthorized({ reason: "no bearer token" })
    const principal: Principal = yield* keys.authenticate(token)
    if (!principal.scopes.includes(scope)) return yield* new Forbidden({ scope })
    return principal
  })
