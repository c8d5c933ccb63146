/**
 * `/v3/pinata/keys`: a workspace's own API keys, as the pinata SDK's `keys.create`, `keys.list` and `keys.revoke`
 * call them: create (`{keyName, permissions, maxUses?}` → `{JWT, pinata_api_key, pinata_api_secret}`), list
 * (`{keys, count}`, filtered by `name`, `revoked`, `limitedUse`, `exhausted`, paged by `offset`) and revoke
 * (`PUT /v3/pinata/keys/{key}` → `"Revoked"`). Every route asks for `org:keys`; Pinata's answers are not enveloped.
 */
import { ApiKeys, type KeyListQuery } from "@cairn/application"
import { ApiKey, ValidationFailed } from "@cairn/domain"
import { Effect, Schema } from "effect"
import { HttpRouter, type HttpServerRequest } from "effect/http"
import { requireScope } from "../Authenticate.ts"
import * as Body from "../Body.ts"
import { handled } from "../ErrorResponse.ts"
import { json } from "../Respond.ts"
import * as RouteCatalog from "../RouteCatalog.ts"
import * as KeyWire from "./KeyWire.ts"

const CreateBody = Schema.Struct({
  keyName: Schema.String,
  permissions: ApiKey.Permissions,
  maxUses: Schema.optionalKey(Schema.Number)
})

const Flag = Schema.optionalKey(Schema.Literals(["true", "false"]))
/** The list's query, for the route catalog. */
const ListQueryParams = Schema.Struct({ name: Schema.optionalKey(Schema.String), revoked: Flag, limitedUse: Flag, exhausted: Flag, offset: Schema.optionalKey(Schema.String) })

const listQuery = (request: HttpServerRequest.HttpServerRequest) =>
  Effect.gen(function*() {
    const params = new URL(request.url, "http://cairn").searchParams
    const flag = (name: string) => {
      const value = params.get(name)
      if (value === null) return Effect.succeed(undefined)
      return value === "true" || value === "false"
        ? Effect.succeed(value === "true")
        : Effect.fail(new ValidationFailed({ detail: `${name} must be true or false` }))
    }
    const offset = params.get("offset") ?? "0"
    if (!/^\d{1,9}$/.test(offset)) return yield* new ValidationFailed({ detail: "offset must be a whole number" })
    const [revoked, limitedUse, exhausted] = [yield* flag("revoked"), yield* flag("limitedUse"), yield* flag("exhausted")]
    const name = params.get("name") ?? undefined
    const query: KeyListQuery = {
      offset: Number(offset),
      ...(name === undefined ? {} : { name }),
      ...(revoked === undefined ? {} : { revoked }),
      ...(limitedUse === undefined ? {} : { limitedUse }),
      ...(exhausted === undefined ? {} : { exhausted })
    }
    return query
  })

const Revoked = Schema.Literal("Revoked")

export const layer = HttpRouter.use((router) =>
  Effect.gen(function*() {
    const keys = yield* ApiKeys

    yield* RouteCatalog.add(router, { method: "POST", path: "/v3/pinata/keys", summary: "Create an API key of the caller's workspace, with Pinata's permissions as scopes", auth: "apiKey", scope: "org:keys", body: { schema: CreateBody }, response: { schema: KeyWire.Created, description: "The key's JWT and its pinata_api_key/pinata_api_secret pair: the only time they are answered" } }, (request) =>
      handled(Effect.gen(function*() {
        const principal = yield* requireScope(keys, request, "org:keys")
        const body = yield* Body.json(request, CreateBody)
        const created = yield* keys.createSelfService(principal, {
          keyName: body.keyName,
          permissions: body.permissions,
          ...(body.maxUses === undefined ? {} : { maxUses: body.maxUses })
        })
        return json(created satisfies typeof KeyWire.Created.Type)
      })))

    yield* RouteCatalog.add(router, { method: "GET", path: "/v3/pinata/keys", summary: "List the caller's workspace's API keys (never a secret)", auth: "apiKey", scope: "org:keys", query: ListQueryParams, response: { schema: KeyWire.KeyList } }, (request) =>
      handled(Effect.gen(function*() {
        const principal = yield* requireScope(keys, request, "org:keys")
        const page = yield* keys.list(principal, yield* listQuery(request))
        return json({ keys: page.keys.map(KeyWire.toWire), count: page.count } satisfies typeof KeyWire.KeyList.Type)
      })))

    yield* RouteCatalog.add(router, { method: "PUT", path: "/v3/pinata/keys/:key", summary: "Revoke an API key of the caller's workspace", auth: "apiKey", scope: "org:keys", response: { schema: Revoked }, errors: [new ApiKey.KeyNotFound({ keyId: "" })] }, (request) =>
      handled(Effect.gen(function*() {
        const principal = yield* requireScope(keys, request, "org:keys")
        const { key } = yield* HttpRouter.params
        yield* keys.revokeInWorkspace(principal, key ?? "")
        return json("Revoked")
      })))
  })
)
