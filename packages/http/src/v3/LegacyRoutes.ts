/**
 * The rest of Pinata's legacy (v1) pinning API that the `@pinata/sdk` 2.x package calls, on the public network:
 * `POST /pinning/pinJSONToIPFS` (a JSON document pinned as a file), `GET /data/pinList` (the workspace's pins with
 * the SDK's filters, by offset), `DELETE /pinning/unpin/{hash}` and `PUT /pinning/hashMetadata` (every file of the
 * CID in the workspace), `POST /pinning/pinByHash` (a pin-by-CID job, PinJobs). `pinFileToIPFS` is in FilesRoutes.ts, `testAuthentication` in AuthRoutes.ts. Answers are
 * flat, as Pinata's v1 API gives them (no `{data}` envelope); unpin and hashMetadata answer the text `OK`.
 *
 * That SDK's base URL is fixed (`https://api.pinata.cloud`); it reaches Cairn through its HTTP client's proxy
 * setting (`https_proxy=http://<cairn>`), which sends absolute-form request targets: RequestEdge.ts serves those
 * as their path.
 */
import { ApiKeys, Files, type KeyValueCondition, type KeyValueOp, PinJobs } from "@cairn/application"
import { canonical as canonicalCid, Cid, File, ValidationFailed } from "@cairn/domain"
import { Effect, Option, Schema, Stream } from "effect"
import { HttpRouter, type HttpServerRequest, HttpServerResponse } from "effect/http"
import { requireScope } from "../Authenticate.ts"
import * as Body from "../Body.ts"
import { handled } from "../ErrorResponse.ts"
import { json, standardHeaders } from "../Respond.ts"
import * as RouteCatalog from "../RouteCatalog.ts"
import * as LegacyPinning from "./LegacyPinning.ts"

/** A JSON document to pin is held in memory: this much at most. */
export const jsonLimitBytes = 10 * 1024 * 1024

/** The JSON body of `pinJSONToIPFS` is over `jsonLimitBytes`. */
class JsonTooLarge extends Schema.TaggedError<JsonTooLarge>()("JsonTooLarge", {}) {
  readonly status = 413
  override readonly message = "File too large"
}

/** A key-value as the legacy API takes it: numbers and booleans are kept as their text. */
const LegacyValue = Schema.Union([Schema.String, Schema.Number, Schema.Boolean])
const text = (value: string | number | boolean) => String(value)

const PinMetadata = Schema.Struct({
  name: Schema.optional(Schema.NullOr(Schema.String)),
  keyvalues: Schema.optional(Schema.NullOr(Schema.Record(Schema.String, LegacyValue)))
})

const PinOptions = Schema.Struct({
  cidVersion: Schema.optional(Schema.Union([Schema.Literals([0, 1]), Schema.Literals(["0", "1"])])),
  groupId: Schema.optional(Schema.NullOr(Schema.String))
})

/** `{pinataContent, pinataMetadata?, pinataOptions?}`, as the SDK sends it when given options. */
const Wrapped = Schema.Struct({
  pinataContent: Schema.Unknown,
  pinataMetadata: Schema.optional(PinMetadata),
  pinataOptions: Schema.optional(PinOptions)
})

/** `pinByHash`'s body: the CID, with the pin's metadata and options (`hostNodes` are hints, kept with the job). */
const PinByHash = Schema.Struct({
  hashToPin: Cid,
  pinataMetadata: Schema.optional(PinMetadata),
  pinataOptions: Schema.optional(Schema.Struct({
    hostNodes: Schema.optional(Schema.Array(Schema.String)),
    groupId: Schema.optional(Schema.NullOr(Schema.String))
  }))
})

/** What `pinByHash` answers: the job queued, as Pinata's v1 API gives it. */
const PinByHashAnswer = Schema.Struct({ id: Schema.String, ipfsHash: Schema.String, status: Schema.String, name: Schema.String })

const HashMetadata = Schema.Struct({
  ipfsPinHash: Schema.String,
  name: Schema.optional(Schema.String.pipe(Schema.check(Schema.isMinLength(1)))),
  keyvalues: Schema.optional(Schema.Record(Schema.String, Schema.NullOr(LegacyValue)))
})

/** One row of `pinList`, as Pinata's v1 API gives it. */
const PinRow = Schema.Struct({
  id: Schema.String,
  ipfs_pin_hash: Schema.String,
  size: Schema.Int,
  user_id: Schema.String,
  date_pinned: Schema.String,
  date_unpinned: Schema.Null,
  metadata: Schema.Struct({ name: Schema.String, keyvalues: File.KeyValues }),
  regions: Schema.Array(Schema.Unknown),
  mime_type: Schema.String,
  number_of_files: Schema.Int
})
const PinListAnswer = Schema.Struct({ count: Schema.Int, rows: Schema.Array(PinRow) })

/** The query of `pinList`, for the route catalog (`metadata[name]` and `metadata[keyvalues]` besides). */
const PinListQuery = Schema.Struct({
  status: Schema.optionalKey(Schema.Literals(["all", "pinned", "unpinned"])),
  hashContains: Schema.optionalKey(Schema.String),
  pinStart: Schema.optionalKey(Schema.String),
  pinEnd: Schema.optionalKey(Schema.String),
  unpinStart: Schema.optionalKey(Schema.String),
  unpinEnd: Schema.optionalKey(Schema.String),
  pinSizeMin: Schema.optionalKey(Schema.String),
  pinSizeMax: Schema.optionalKey(Schema.String),
  pageLimit: Schema.optionalKey(Schema.String),
  pageOffset: Schema.optionalKey(Schema.String),
  includeCount: Schema.optionalKey(Schema.String)
})

const ops: ReadonlyArray<KeyValueOp> = [
  "eq", "ne", "gt", "gte", "lt", "lte", "between", "notBetween", "like", "notLike", "iLike", "notILike", "regexp", "iRegexp"
]

const KeyValueFilter = Schema.Record(Schema.String, Schema.Struct({
  value: LegacyValue,
  op: Schema.Literals(ops),
  secondValue: Schema.optionalKey(LegacyValue)
}))

const invalid = (detail: string) => new ValidationFailed({ detail })

/** A whole number in a range, from the query. */
const whole = (name: string, value: string | null, minimum: number, maximum: number) =>
  value === null
    ? Effect.succeed(undefined)
    : /^\d+$/.test(value) && Number(value) >= minimum && Number(value) <= maximum
    ? Effect.succeed(Number(value))
    : Effect.fail(invalid(`${name} must be a whole number from ${minimum}${maximum === Number.MAX_SAFE_INTEGER ? " up" : ` to ${maximum}`}`))

/** A date from the query, as ISO 8601 (the SDK sends `toISOString()`'s form). */
const date = (name: string, value: string | null) =>
  value === null
    ? Effect.succeed(undefined)
    : Number.isNaN(Date.parse(value))
    ? Effect.fail(invalid(`${name} must be an ISO 8601 date`))
    : Effect.succeed(new Date(value).toISOString())

/** What `pinList` asks for, or why it cannot be answered; `none` when it asks only for unpinned files (none are kept). */
const pinListQuery = (request: HttpServerRequest.HttpServerRequest) =>
  Effect.gen(function*() {
    const params = new URL(request.url, "http://cairn").searchParams
    const status = params.get("status") ?? "all"
    if (status !== "all" && status !== "pinned" && status !== "unpinned") {
      return yield* invalid("status must be all, pinned or unpinned")
    }
    const limit = (yield* whole("pageLimit", params.get("pageLimit"), 1, 1000)) ?? 10
    const offset = (yield* whole("pageOffset", params.get("pageOffset"), 0, Number.MAX_SAFE_INTEGER)) ?? 0
    const pinStart = yield* date("pinStart", params.get("pinStart"))
    const pinEnd = yield* date("pinEnd", params.get("pinEnd"))
    const unpinStart = yield* date("unpinStart", params.get("unpinStart"))
    const unpinEnd = yield* date("unpinEnd", params.get("unpinEnd"))
    const sizeMin = yield* whole("pinSizeMin", params.get("pinSizeMin"), 0, Number.MAX_SAFE_INTEGER)
    const sizeMax = yield* whole("pinSizeMax", params.get("pinSizeMax"), 0, Number.MAX_SAFE_INTEGER)
    const keyvaluesParam = params.get("metadata[keyvalues]")
    const keyvalues: Array<KeyValueCondition> = []
    if (keyvaluesParam !== null) {
      let parsed: unknown
      try {
        parsed = JSON.parse(keyvaluesParam)
      } catch {
        return yield* invalid("metadata[keyvalues] must be JSON {\"<key>\": {\"value\": …, \"op\": …}}")
      }
      const filter = yield* Schema.decodeUnknownEffect(KeyValueFilter)(parsed).pipe(
        Effect.mapError(() => invalid(`metadata[keyvalues] must map each key to {value, op, secondValue?} with op one of ${ops.join(", ")}`))
      )
      for (const [key, condition] of Object.entries(filter)) {
        if ((condition.op === "between" || condition.op === "notBetween") && condition.secondValue === undefined) {
          return yield* invalid(`metadata[keyvalues] ${key}: ${condition.op} needs a secondValue`)
        }
        const { op, value, secondValue } = condition
        keyvalues.push({ key, op, value, ...(secondValue === undefined ? {} : { secondValue }) })
      }
    }
    const name = params.get("metadata[name]")
    const hashContains = params.get("hashContains")
    // Unpinned files are not kept: a query for them alone finds none.
    const onlyUnpinned = status === "unpinned" || unpinStart !== undefined || unpinEnd !== undefined
    return onlyUnpinned ? Option.none() : Option.some({
      limit,
      offset,
      ...(hashContains === null || hashContains === "" ? {} : { hashContains }),
      ...(pinStart === undefined ? {} : { pinStart }),
      ...(pinEnd === undefined ? {} : { pinEnd }),
      ...(sizeMin === undefined ? {} : { sizeMin }),
      ...(sizeMax === undefined ? {} : { sizeMax }),
      ...(name === null || name === "" ? {} : { name }),
      ...(keyvalues.length === 0 ? {} : { keyvalues })
    })
  })

const decodeCid = (value: string) =>
  Option.match(canonicalCid(value), {
    onNone: () => Effect.fail(invalid(`${JSON.stringify(value)} is not a CID`)),
    onSome: Effect.succeed
  })

const ok = () => HttpServerResponse.text("OK", { headers: standardHeaders() })

export const layer = HttpRouter.use((router) =>
  Effect.gen(function*() {
    const keys = yield* ApiKeys
    const files = yield* Files
    const jobs = yield* PinJobs

    yield* RouteCatalog.add(router, { method: "POST", path: "/pinning/pinByHash", summary: "Pinata's legacy pin by CID: a pin-by-CID job on the public network (its status on GET /v3/files/public/pin_by_cid)", auth: "apiKey", scope: "org:files:write", body: { schema: PinByHash }, response: { schema: PinByHashAnswer } }, (request) =>
      handled(Effect.gen(function*() {
        const principal = yield* requireScope(keys, request, "org:files:write")
        const body = yield* Body.json(request, PinByHash)
        const metadata = body.pinataMetadata ?? {}
        const job = yield* jobs.submit(principal, "public", {
          cid: body.hashToPin,
          name: metadata.name ? metadata.name : undefined,
          groupId: body.pinataOptions?.groupId ? body.pinataOptions.groupId : null,
          keyvalues: Object.fromEntries(Object.entries(metadata.keyvalues ?? {}).map(([key, value]) => [key, text(value)])),
          hostNodes: body.pinataOptions?.hostNodes
        })
        return json({ id: job.id, ipfsHash: job.cid, status: job.status, name: job.name } satisfies typeof PinByHashAnswer.Type)
      })))

    yield* RouteCatalog.add(router, { method: "POST", path: "/pinning/pinJSONToIPFS", summary: "Pinata's legacy JSON pin: the document stored as a file (public network)", auth: "apiKey", scope: "org:files:write", body: { contentType: "application/json", description: "a JSON object, or {pinataContent, pinataMetadata: {name, keyvalues}, pinataOptions: {cidVersion, groupId}}" }, response: { schema: LegacyPinning.LegacyWire }, errors: [new JsonTooLarge()] }, (request) =>
      handled(Effect.gen(function*() {
        const principal = yield* requireScope(keys, request, "org:files:write")
        const body = yield* Body.jsonWithin(request, Schema.Unknown, jsonLimitBytes, () => new JsonTooLarge())
        const wrapped = typeof body === "object" && body !== null && !Array.isArray(body) && "pinataContent" in body
          ? yield* Schema.decodeUnknownEffect(Wrapped)(body)
          : { pinataContent: body, pinataMetadata: undefined, pinataOptions: undefined }
        const content = wrapped.pinataContent
        if (typeof content !== "object" || content === null) {
          return yield* invalid("the body must be a JSON object or array, or {pinataContent, pinataMetadata, pinataOptions}")
        }
        const metadata = wrapped.pinataMetadata ?? {}
        const options = wrapped.pinataOptions ?? {}
        const bytes = new TextEncoder().encode(JSON.stringify(content))
        const pinned = yield* files.upload(principal, {
          network: "public",
          name: metadata.name ? metadata.name : "data.json",
          mimeType: "application/json",
          groupId: options.groupId ? options.groupId : null,
          keyvalues: Object.fromEntries(Object.entries(metadata.keyvalues ?? {}).map(([key, value]) => [key, text(value)])),
          cidVersion: options.cidVersion === 1 || options.cidVersion === "1" ? 1 : 0,
          content: Stream.make(bytes),
          size: bytes.byteLength
        })
        return json(LegacyPinning.toLegacyWire(pinned))
      })))

    yield* RouteCatalog.add(router, { method: "GET", path: "/data/pinList", summary: "Pinata's legacy pin list (public network): filters, newest first, by offset", auth: "apiKey", scope: "org:files:read", query: PinListQuery, response: { schema: PinListAnswer } }, (request) =>
      handled(Effect.gen(function*() {
        const principal = yield* requireScope(keys, request, "org:files:read")
        const query = yield* pinListQuery(request)
        if (Option.isNone(query)) return json({ count: 0, rows: [] })
        const page = yield* files.legacyList(principal, "public", query.value)
        return json({
          count: page.count,
          rows: page.rows.map((file): typeof PinRow.Type => ({
            id: file.id,
            ipfs_pin_hash: file.cid,
            size: file.size,
            user_id: file.userId,
            date_pinned: file.createdAt,
            date_unpinned: null,
            metadata: { name: file.name, keyvalues: file.keyvalues },
            regions: [],
            mime_type: file.mimeType,
            number_of_files: file.numberOfFiles
          }))
        })
      })))

    yield* RouteCatalog.add(router, { method: "DELETE", path: "/pinning/unpin/:hash", summary: "Pinata's legacy unpin: deletes the workspace's files of this CID (public network)", auth: "apiKey", scope: "org:files:write", response: { contentType: "text/plain", description: "OK" }, errors: [new File.CidNotPinned({ cid: "" })] }, (request) =>
      handled(Effect.gen(function*() {
        const principal = yield* requireScope(keys, request, "org:files:write")
        const cid = yield* decodeCid((yield* HttpRouter.params)["hash"] ?? "")
        yield* files.unpin(principal, "public", cid)
        return ok()
      })))

    yield* RouteCatalog.add(router, { method: "PUT", path: "/pinning/hashMetadata", summary: "Pinata's legacy metadata change: renames the CID's files, merges key-values (null removes one)", auth: "apiKey", scope: "org:files:write", body: { schema: HashMetadata }, response: { contentType: "text/plain", description: "OK" }, errors: [new File.CidNotPinned({ cid: "" })] }, (request) =>
      handled(Effect.gen(function*() {
        const principal = yield* requireScope(keys, request, "org:files:write")
        const change = yield* Body.json(request, HashMetadata)
        const cid = yield* decodeCid(change.ipfsPinHash)
        if (change.name === undefined && change.keyvalues === undefined) return yield* invalid("give a name or keyvalues to change")
        yield* files.updateByCid(principal, "public", cid, {
          ...(change.name === undefined ? {} : { name: change.name }),
          ...(change.keyvalues === undefined ? {} : {
            keyvalues: Object.fromEntries(Object.entries(change.keyvalues).map(([key, value]) => [key, value === null ? null : text(value)]))
          })
        })
        return ok()
      })))
  })
)
