/**
 * `testAuthentication` (at `/v3/data/…` where the SDK's `endpointUrl` puts it, and at `/data/…` for the default
 * base) and the JWKS that lets anyone verify Cairn's API keys.
 */
import { ApiKeys } from "@cairn/application"
import { TokenSigner } from "@cairn/auth"
import { Effect, Schema } from "effect"
import { HttpRouter, type HttpServerRequest } from "effect/http"
import { authenticate } from "../Authenticate.ts"
import { handled } from "../ErrorResponse.ts"
import { json } from "../Respond.ts"
import * as RouteCatalog from "../RouteCatalog.ts"

const TestAuthentication = Schema.Struct({ message: Schema.String })

/** The public keys (JWK, RFC 7517) that verify API keys, each with its `kid` (its RFC 7638 thumbprint), `alg` and `use`. */
const Jwks = Schema.Struct({
  keys: Schema.Array(Schema.StructWithRest(
    Schema.Struct({ kty: Schema.String, kid: Schema.String, alg: Schema.String, use: Schema.Literal("sig") }),
    [Schema.Record(Schema.String, Schema.String)]
  ))
})

export const layer = HttpRouter.use((router) =>
  Effect.gen(function*() {
    const keys = yield* ApiKeys
    const signer = yield* TokenSigner
    const testAuthentication = (request: HttpServerRequest.HttpServerRequest) =>
      handled(Effect.gen(function*() {
        yield* authenticate(keys, request)
        return json({ message: "Congratulations! You are communicating with the Cairn API!" })
      }))
    yield* RouteCatalog.add(router, { method: "GET", path: "/v3/data/testAuthentication", summary: "Check an API key", auth: "apiKey", response: { schema: TestAuthentication } }, testAuthentication)
    yield* RouteCatalog.add(router, { method: "GET", path: "/data/testAuthentication", summary: "Check an API key (the SDK's default base)", auth: "apiKey", response: { schema: TestAuthentication } }, testAuthentication)
    yield* RouteCatalog.add(router, { method: "GET", path: "/.well-known/jwks.json", summary: "The public keys that verify Cairn's API keys", auth: "none", response: { schema: Jwks } }, Effect.map(signer.jwks, (jwks) => json(jwks)))
  })
)
