/**
 * `/v3/groups/{network}`: create, list (with `name`, `isPublic`, `limit` and `pageToken`), get, update and delete
 * a workspace's groups on one network, and put files in a group or take them out
 * (`/v3/groups/{network}/{groupId}/ids/{fileId}`), as the pinata SDK's `groups.public` and `groups.private` call
 * them. Responses use the `{data: …}` envelope; the SDK reads a delete's and a file change's status line only.
 */
import { ApiKeys, type GroupListQuery, Groups } from "@cairn/application"
import { File, Group, Network, ValidationFailed } from "@cairn/domain"
import { Effect, Schema } from "effect"
import { HttpRouter, type HttpServerRequest } from "effect/http"
import { requireScope } from "../Authenticate.ts"
import * as Body from "../Body.ts"
import { handled } from "../ErrorResponse.ts"
import { data, json } from "../Respond.ts"
import * as RouteCatalog from "../RouteCatalog.ts"
import * as GroupWire from "./GroupWire.ts"

const decodeNetwork = (params: Readonly<Record<string, string | undefined>>) =>
  Schema.decodeUnknownEffect(Network)(params["network"]).pipe(
    Effect.mapError(() => new ValidationFailed({ detail: `network must be public or private, not ${JSON.stringify(params["network"] ?? "")}` }))
  )

const Limit = Schema.NumberFromString.pipe(Schema.check(Schema.isInt(), Schema.isBetween({ minimum: 1, maximum: 1000 })))

const listQuery = (request: HttpServerRequest.HttpServerRequest) =>
  Effect.gen(function*() {
    const params = new URL(request.url, "http://cairn").searchParams
    const get = (name: string) => params.get(name) ?? undefined
    const limit = get("limit") === undefined ? 10 : yield* Schema.decodeUnknownEffect(Limit)(get("limit")).pipe(
      Effect.mapError(() => new ValidationFailed({ detail: "limit must be a whole number from 1 to 1000" }))
    )
    const isPublic = get("isPublic")
    if (isPublic !== undefined && isPublic !== "true" && isPublic !== "false") {
      return yield* new ValidationFailed({ detail: "isPublic must be true or false" })
    }
    const query: GroupListQuery = {
      limit,
      ...(get("name") === undefined ? {} : { name: get("name")! }),
      ...(isPublic === undefined ? {} : { isPublic: isPublic === "true" }),
      ...(get("pageToken") === undefined ? {} : { pageToken: get("pageToken")! })
    }
    return query
  })

/** The list's query, for the route catalog. */
const ListQueryParams = Schema.Struct({
  name: Schema.optionalKey(Schema.String),
  isPublic: Schema.optionalKey(Schema.Literals(["true", "false"])),
  limit: Schema.optionalKey(Schema.String),
  pageToken: Schema.optionalKey(Schema.String)
})

const CreateBody = Schema.Struct({
  name: Schema.String,
  is_public: Schema.optionalKey(Schema.Boolean)
})

const UpdateBody = Schema.Struct({
  name: Schema.optionalKey(Schema.String),
  is_public: Schema.optionalKey(Schema.Boolean)
})

const GroupEnvelope = Schema.Struct({ data: GroupWire.Group })
const GroupListEnvelope = Schema.Struct({ data: Schema.Struct({ groups: Schema.Array(GroupWire.Group), next_page_token: Schema.String }) })
const NullEnvelope = Schema.Struct({ data: Schema.Null })

const groupNotFound = new Group.GroupNotFound({ groupId: "" })
const duplicateName = new Group.DuplicateGroupName({ name: "" })

export const layer = HttpRouter.use((router) =>
  Effect.gen(function*() {
    const keys = yield* ApiKeys
    const groups = yield* Groups

    /** The caller (with the scope), the path's network and the group id it names. */
    const target = (request: HttpServerRequest.HttpServerRequest, scope: string) =>
      Effect.gen(function*() {
        const principal = yield* requireScope(keys, request, scope)
        const params = yield* HttpRouter.params
        const network = yield* decodeNetwork(params)
        return { principal, network, groupId: params["groupId"] ?? "", fileId: params["fileId"] ?? "" }
      })

    yield* RouteCatalog.add(router, { method: "POST", path: "/v3/groups/:network", summary: "Create a group", auth: "apiKey", scope: "org:groups:write", body: { schema: CreateBody }, response: { schema: GroupEnvelope }, errors: [duplicateName] }, (request) =>
      handled(Effect.gen(function*() {
        const principal = yield* requireScope(keys, request, "org:groups:write")
        const network = yield* decodeNetwork(yield* HttpRouter.params)
        const body = yield* Body.json(request, CreateBody)
        return data(GroupWire.toWire(yield* groups.create(principal, network, { name: body.name, isPublic: body.is_public ?? false })))
      })))

    yield* RouteCatalog.add(router, { method: "GET", path: "/v3/groups/:network", summary: "List groups", auth: "apiKey", scope: "org:groups:read", query: ListQueryParams, response: { schema: GroupListEnvelope } }, (request) =>
      handled(Effect.gen(function*() {
        const principal = yield* requireScope(keys, request, "org:groups:read")
        const network = yield* decodeNetwork(yield* HttpRouter.params)
        const page = yield* groups.list(principal, network, yield* listQuery(request))
        return data({ groups: page.groups.map(GroupWire.toWire), next_page_token: page.nextPageToken })
      })))

    yield* RouteCatalog.add(router, { method: "GET", path: "/v3/groups/:network/:groupId", summary: "Get a group", auth: "apiKey", scope: "org:groups:read", response: { schema: GroupEnvelope }, errors: [groupNotFound] }, (request) =>
      handled(Effect.gen(function*() {
        const { principal, network, groupId } = yield* target(request, "org:groups:read")
        return data(GroupWire.toWire(yield* groups.get(principal, network, groupId)))
      })))

    yield* RouteCatalog.add(router, { method: "PUT", path: "/v3/groups/:network/:groupId", summary: "Rename a group or change its is_public flag", auth: "apiKey", scope: "org:groups:write", body: { schema: UpdateBody }, response: { schema: GroupEnvelope }, errors: [groupNotFound, duplicateName] }, (request) =>
      handled(Effect.gen(function*() {
        const { principal, network, groupId } = yield* target(request, "org:groups:write")
        const change = yield* Body.json(request, UpdateBody)
        if (change.name === undefined && change.is_public === undefined) {
          return yield* new ValidationFailed({ detail: "give a name or is_public to update" })
        }
        return data(GroupWire.toWire(yield* groups.update(principal, network, groupId, {
          ...(change.name === undefined ? {} : { name: change.name }),
          ...(change.is_public === undefined ? {} : { isPublic: change.is_public })
        })))
      })))

    yield* RouteCatalog.add(router, { method: "DELETE", path: "/v3/groups/:network/:groupId", summary: "Delete a group (its files stay, in no group)", auth: "apiKey", scope: "org:groups:write", response: { schema: NullEnvelope }, errors: [groupNotFound] }, (request) =>
      handled(Effect.gen(function*() {
        const { principal, network, groupId } = yield* target(request, "org:groups:write")
        yield* groups.remove(principal, network, groupId)
        return json({ data: null })
      })))

    yield* RouteCatalog.add(router, { method: "PUT", path: "/v3/groups/:network/:groupId/ids/:fileId", summary: "Put a file in a group (out of the one it was in)", auth: "apiKey", scope: "org:groups:write", response: { schema: NullEnvelope }, errors: [groupNotFound, new File.FileNotFound({ fileId: "" })] }, (request) =>
      handled(Effect.gen(function*() {
        const { principal, network, groupId, fileId } = yield* target(request, "org:groups:write")
        yield* groups.addFile(principal, network, groupId, fileId)
        return json({ data: null })
      })))

    yield* RouteCatalog.add(router, { method: "DELETE", path: "/v3/groups/:network/:groupId/ids/:fileId", summary: "Take a file out of a group", auth: "apiKey", scope: "org:groups:write", response: { schema: NullEnvelope }, errors: [groupNotFound, new File.FileNotFound({ fileId: "" })] }, (request) =>
      handled(Effect.gen(function*() {
        const { principal, network, groupId, fileId } = yield* target(request, "org:groups:write")
        yield* groups.removeFile(principal, network, groupId, fileId)
        return json({ data: null })
      })))
  })
)
