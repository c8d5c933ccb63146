/**
 * `/v3/files`: upload (multipart, or the resumable protocol when `Upload-Length` is present), list with the
 * pinata SDK's filters and pagination, get, update and delete. Responses use the `{data: …}` envelope.
 */
import { ApiKeys, Files, type ListQuery } from "@cairn/application"
import { Cid, File, Network, ValidationFailed } from "@cairn/domain"
import { ByteSize, Config, Effect, FileSystem, Path, Schema } from "effect"
import { HttpRouter, type HttpServerRequest, Multipart } from "effect/http"
import { requireScope } from "../Authenticate.ts"
import * as Body from "../Body.ts"
import { handled } from "../ErrorResponse.ts"
import { data, json } from "../Respond.ts"
import * as ContentType from "../ContentType.ts"
import { toWire } from "./FileWire.ts"
import * as ResumableUploads from "./ResumableUploads.ts"
import * as UploadOptions from "./UploadOptions.ts"

/** Above this, the SDK switches to the resumable protocol (90 MiB); multipart accepts a little more. */
export const multipartLimitBytes = 100 * 1024 * 1024

const decodeNetwork = (params: Readonly<Record<string, string | undefined>>) =>
  Schema.decodeUnknownEffect(Network)(params["network"])

const decodeCid = Schema.decodeUnknownEffect(Cid)

const Limit = Schema.NumberFromString.pipe(Schema.check(Schema.isInt(), Schema.isBetween({ minimum: 1, maximum: 1000 })))

const listQuery = (request: HttpServerRequest.HttpServerRequest) =>
  Effect.gen(function*() {
    const params = new URL(request.url, "http://cairn").searchParams
    const keyvalues: Record<string, string> = {}
    for (const [key, value] of params) {
      const match = /^(?:keyvalues|metadata)\[(.+)\]$/.exec(key)
      if (match) keyvalues[match[1]!] = value
    }
    const get = (name: string) => params.get(name) ?? undefined
    const order = (get("order") ?? "DESC").toUpperCase()
    if (order !== "ASC" && order !== "DESC") return yield* new ValidationFailed({ detail: "order must be ASC or DESC" })
    const limit = get("limit") === undefined ? 10 : yield* Schema.decodeUnknownEffect(Limit)(get("limit")).pipe(
      Effect.mapError(() => new ValidationFailed({ detail: "limit must be a whole number from 1 to 1000" }))
    )
    const cid = get("cid")
    const group = get("group")
    const query: ListQuery = {
      order,
      limit,
      ...(get("name") === undefined ? {} : { name: get("name")! }),
      ...(cid === undefined ? {} : { cid: yield* decodeCid(cid) }),
      ...(get("mimeType") === undefined ? {} : { mimeType: get("mimeType")! }),
      ...(group === undefined ? {} : { group: group === "null" ? null : group }),
      ...(Object.keys(keyvalues).length === 0 ? {} : { keyvalues }),
      ...(get("pageToken") === undefined ? {} : { pageToken: get("pageToken")! })
    }
    return query
  })

const UpdateBody = Schema.Struct({
  name: Schema.optional(Schema.String.pipe(Schema.check(Schema.isMinLength(1)))),
  keyvalues: Schema.optional(File.KeyValues)
})

export const layer = HttpRouter.use((router) =>
  Effect.gen(function*() {
    const keys = yield* ApiKeys
    const files = yield* Files
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const dataDir = yield* Config.String("DATA_DIR").pipe(Config.withDefault("./data"))
    const resumable = yield* ResumableUploads.make({ directory: path.join(dataDir, "uploads"), files, fs })

    const uploadMultipart = (request: HttpServerRequest.HttpServerRequest) =>
      Effect.gen(function*() {
        const principal = yield* requireScope(keys, request, "org:files:write")
        const form = yield* request.multipart.pipe(
          Effect.provideService(FileSystem.FileSystem, fs),
          Effect.provideService(Path.Path, path),
          Effect.provideService(Multipart.MaxFileSize, ByteSize.bytes(multipartLimitBytes))
        )
        const fields: Record<string, string> = {}
        let file: Multipart.PersistedFile | undefined
        for (const [key, value] of Object.entries(form)) {
          if (typeof value === "string") fields[key] = value
          else if (value.length > 0 && Multipart.isPersistedFile(value[0])) {
            if (key === "file") file = value[0]
          } else if (typeof value[0] === "string") fields[key] = value[0]
        }
        if (file === undefined) return yield* new ValidationFailed({ detail: "a file part named \"file\" is required" })
        const options = yield* UploadOptions.decode(fields)
        const given = options.mimeType ?? file.contentType
        const uploaded = yield* files.upload(principal, {
          network: options.network,
          name: options.name ?? (file.name || "File from SDK"),
          mimeType: ContentType.isGeneric(given) ? yield* ContentType.sniffStream(fs.stream(file.path)) : given,
          groupId: options.groupId,
          keyvalues: options.keyvalues,
          cidVersion: options.cidVersion,
          content: fs.stream(file.path)
        })
        return data(toWire(uploaded))
      }).pipe(Effect.scoped)

    yield* router.add("POST", "/v3/files", (request) =>
      handled(Effect.gen(function*() {
        if (request.headers["upload-length"] !== undefined) return yield* resumable.create(keys, request)
        return yield* uploadMultipart(request)
      })))
    yield* router.add("PATCH", "/v3/files/uploads/:uploadId", (request) =>
      handled(Effect.flatMap(HttpRouter.params, (params) => resumable.append(keys, request, params["uploadId"] ?? ""))))
    yield* router.add("GET", "/v3/files/uploads/:uploadId", (request) =>
      handled(Effect.flatMap(HttpRouter.params, (params) => resumable.status(keys, request, params["uploadId"] ?? ""))))

    yield* router.add("GET", "/v3/files/:network", (request) =>
      handled(Effect.gen(function*() {
        const principal = yield* requireScope(keys, request, "org:files:read")
        const network = yield* decodeNetwork(yield* HttpRouter.params)
        const page = yield* files.list(principal, network, yield* listQuery(request))
        return data({ files: page.files.map(toWire), next_page_token: page.nextPageToken })
      })))

    yield* router.add("GET", "/v3/files/:network/:id", (request) =>
      handled(Effect.gen(function*() {
        const principal = yield* requireScope(keys, request, "org:files:read")
        const params = yield* HttpRouter.params
        const network = yield* decodeNetwork(params)
        return data(toWire(yield* files.get(principal, network, params["id"] ?? "")))
      })))

    yield* router.add("PUT", "/v3/files/:network/:id", (request) =>
      handled(Effect.gen(function*() {
        const principal = yield* requireScope(keys, request, "org:files:write")
        const params = yield* HttpRouter.params
        const network = yield* decodeNetwork(params)
        const change = yield* Body.json(request, UpdateBody)
        if (change.name === undefined && change.keyvalues === undefined) {
          return yield* new ValidationFailed({ detail: "give a name or keyvalues to update" })
        }
        return data(toWire(yield* files.update(principal, network, params["id"] ?? "", {
          ...(change.name === undefined ? {} : { name: change.name }),
          ...(change.keyvalues === undefined ? {} : { keyvalues: change.keyvalues })
        })))
      })))

    yield* router.add("DELETE", "/v3/files/:network/:id", (request) =>
      handled(Effect.gen(function*() {
        const principal = yield* requireScope(keys, request, "org:files:write")
        const params = yield* HttpRouter.params
        const network = yield* decodeNetwork(params)
        yield* files.remove(principal, network, params["id"] ?? "")
        return json({ data: null })
      })))
  })
)
