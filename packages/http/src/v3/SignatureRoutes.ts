/**
 * `/v3/files/{network}/signature/{cid}`: attach a wallet's EIP-712 signature to a CID the caller's workspace
 * owns (POST, `org:files:write`), read it (GET, `org:files:read`, a lookup across the network), remove it
 * (DELETE, by the signing workspace). The body `{signature, address}` is JSON whatever its Content-Type.
 */
import { ApiKeys, Signatures } from "@cairn/application"
import { canonical as canonicalCid, Cid, CidRecord, Network } from "@cairn/domain"
import { Effect, Option, Schema } from "effect"
import { HttpRouter } from "effect/http"
import { bearerToken, requireScope, withScope } from "../Authenticate.ts"
import * as Body from "../Body.ts"
import { handled } from "../ErrorResponse.ts"
import { data, json } from "../Respond.ts"
import * as RouteCatalog from "../RouteCatalog.ts"

const Hex = (what: string, pattern: RegExp) =>
  Schema.String.pipe(Schema.check(Schema.makeFilter((s: string) => pattern.test(s) || `${what} must be ${pattern === address ? "a 0x-prefixed 20-byte hex address" : "0x-prefixed hex bytes"}`)))
const address = /^0x[0-9a-fA-F]{40}$/
const signature = /^0x(?:[0-9a-fA-F]{2}){65,}$/

const AddSignature = Schema.Struct({
  signature: Hex("signature", signature),
  address: Hex("address", address)
})

const SignatureEnvelope = Schema.Struct({ data: Schema.Struct({ cid: Schema.String, signature: Schema.String }) })

const Target = Schema.Struct({ network: Network, cid: Cid })
const decodeTarget = Schema.decodeUnknownEffect(Target)
/**
 * The network and canonical CID of the path. A valid path is checked directly, as the Schema would check it (a GET
 * is mostly this and one query: docs/performance.md, bench:http); any other goes through the Schema, for its
 * refusal.
 */
const validTarget = (params: Readonly<Record<string, string | undefined>>): typeof Target.Type | undefined => {
  const { network, cid } = params
  if ((network === "public" || network === "private") && cid !== undefined) {
    const canonical = canonicalCid(cid)
    if (Option.isSome(canonical)) return { network, cid: canonical.value }
  }
  return undefined
}
const target = Effect.flatMap(HttpRouter.params, (params): Effect.Effect<typeof Target.Type, Schema.SchemaError> => {
  const valid = validTarget(params)
  return valid === undefined ? decodeTarget(params) : Effect.succeed(valid)
})

const signatureData = (found: { readonly cid: string; readonly signature: string }) => data({ cid: found.cid, signature: found.signature })

export const layer = HttpRouter.use((router) =>
  Effect.gen(function*() {
    const keys = yield* ApiKeys
    const signatures = yield* Signatures

    yield* RouteCatalog.add(router, { method: "POST", path: "/v3/files/:network/signature/:cid", summary: "Attach a wallet's EIP-712 signature to a CID", auth: "apiKey", scope: "org:files:write", body: { schema: AddSignature }, response: { schema: SignatureEnvelope }, errors: [new CidRecord.CidNotOwned({ cid: "" }), new CidRecord.CidAlreadySigned({ cid: "" }), new CidRecord.SignatureDoesNotVerify({ cid: "" })] }, (request) =>
      handled(Effect.gen(function*() {
        const principal = yield* requireScope(keys, request, "org:files:write")
        const { network, cid } = yield* target
        const body = yield* Body.json(request, AddSignature)
        const added = yield* signatures.add(principal, network, cid, body)
        return data({ cid: added.cid, signature: added.signature })
      })))

    yield* RouteCatalog.add(router, { method: "GET", path: "/v3/files/:network/signature/:cid", summary: "Get a CID's signature", auth: "apiKey", scope: "org:files:read", response: { schema: SignatureEnvelope }, errors: [new CidRecord.SignatureNotFound({ cid: "" })] }, (request) =>
      // The most frequent authenticated request (docs/performance.md, bench:http): no generator, and with a bearer
      // token and a valid path, one database round trip that reads the key's standing with the signature. The
      // refusals come in the same order as the general path's: the token, the key's standing, the scope, then
      // the signature; a path that is not valid takes the general path, so a bad key is still a 401 before the
      // path's 400.
      handled(Effect.flatMap(HttpRouter.params, (params) => {
        const token = bearerToken(request)
        const valid = token === undefined ? undefined : validTarget(params)
        if (token === undefined || valid === undefined) {
          return Effect.flatMap(requireScope(keys, request, "org:files:read"), (principal) =>
            Effect.flatMap(target, ({ cid, network }) => Effect.map(signatures.get(principal, network, cid), signatureData)))
        }
        return Effect.flatMap(keys.verify(token), (claims) =>
          Effect.flatMap(signatures.getWithKey(claims.keyId, valid.network, valid.cid), (read) =>
            Effect.flatMap(Effect.flatMap(keys.admit(claims, read.standing), withScope("org:files:read")), (principal) =>
              Effect.map(read.get(principal), signatureData))))
      })))

    yield* RouteCatalog.add(router, { method: "DELETE", path: "/v3/files/:network/signature/:cid", summary: "Remove a CID's signature", auth: "apiKey", scope: "org:files:write", response: { schema: Schema.Struct({ data: Schema.Null }) }, errors: [new CidRecord.SignatureNotFound({ cid: "" })] }, (request) =>
      handled(Effect.gen(function*() {
        const principal = yield* requireScope(keys, request, "org:files:write")
        const { network, cid } = yield* target
        yield* signatures.remove(principal, network, cid)
        return json({ data: null })
      })))
  })
)
