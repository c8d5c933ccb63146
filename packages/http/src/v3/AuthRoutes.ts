/**
 * `testAuthentication` (at `/v3/data/…` where the SDK's `endpointUrl` puts it, and at `/data/…` for the default
 * base) and the JWKS that lets anyone verify Cairn's API keys.
 */
import { ApiKeys } from "@cairn/application"
import { TokenSigner } from "@cairn/auth"
import { Effect } from "effect"
import { HttpRouter, type HttpServerRequest } from "effect/http"
import { authenticate } from "../Authenticate.ts"
import { handled } from "../ErrorResponse.ts"
import { json } from "../Respond.ts"

export const layer = HttpRouter.use((router) =>
  Effect.gen(function*() {
    const keys = yield* ApiKeys
    const signer = yield* TokenSigner
    const testAuthentication = (request: HttpServerRequest.HttpServerRequest) =>
      handled(Effect.gen(function*() {
        yield* authenticate(keys, request)
        return json({ message: "Congratulations! You are communicating with the Cairn API!" })
      }))
    yield* router.add("GET", "/v3/data/testAuthentication", testAuthentication)
    yield* router.add("GET", "/data/testAuthentication", testAuthentication)
    yield* router.add("GET", "/.well-known/jwks.json", Effect.map(signer.jwks, (jwks) => json(jwks)))
  })
)
