/**
 * `/v3/files`: upload (multipart, or the resumable protocol when `Upload-Length` is present), list with the
 * pinata SDK's filters and pagination, get, update and delete. Responses use the `{data: …}` envelope. A multipart
 * upload with several `file` parts, or one whose filename is a path (`<folder>/<name>`), is a folder: stored as one
 * UnixFS directory. Pinata's legacy `POST /pinning/pinFileToIPFS` (the SDK's `fileArray`) is served here too.
 * Below the data directory's disk reserve an upload is refused before a byte of it is staged (507, DiskReserve.ts),
 * as far as its declared `Content-Length` tells. A presigned upload URL (`POST /v3/files/signed/<id>?X-Signature=…`,
 * made by `POST /v3/files/sign`: SignedUrlRoutes.ts) takes one multipart upload without a key, into the workspace
 * that signed it, with the metadata it was signed with; its grant is checked before the body is read, its size limit
 * while the body streams in (413), its mime types before anything is stored (400), and its one use is recorded with
 * the file (403 `used` for a second upload, however close the two came). It answers browsers' CORS preflight.
 */
import { ApiKeys, DiskReserve, Files, type FolderUpload, type ListQuery, type Principal, SignedUrls } from "@cairn/application"
import { ContentStoreUnavailable, heldBytes, heldContent, type HeldPieces, heldStart, type StagedLeaves } from "@cairn/content-store"
import { bodyBytesRead, LeafWriter, readStaged, readStagedStart, stagedContent } from "@cairn/content-store/node"
import { Cid, DiskSpace, File, Group, Network, SignedUrl, ValidationFailed } from "@cairn/domain"
import { ByteSize, Config, Effect, FileSystem, Path, Schema, type Scope, Stream } from "effect"
import { HttpIncomingMessage, HttpRouter, type HttpServerRequest, HttpServerResponse, Multipart } from "effect/http"
import { requireScope } from "../Authenticate.ts"
import * as Body from "../Body.ts"
import { handled } from "../ErrorResponse.ts"
import { data, json } from "../Respond.ts"
import * as RouteCatalog from "../RouteCatalog.ts"
import * as ContentType from "../ContentType.ts"
import * as SignedUrlQuery from "../SignedUrlQuery.ts"
import * as FileWire from "./FileWire.ts"
import { toWire } from "./FileWire.ts"
import * as LegacyPinning from "./LegacyPinning.ts"
import * as ResumableUploads from "./ResumableUploads.ts"
import * as StaleEntries from "./StaleEntries.ts"
import * as UploadOptions from "./UploadOptions.ts"

/**
 * Above this, the SDK switches to the resumable protocol (90 MiB); multipart accepts a little more. A folder's
 * files count together.
 */
export const multipartLimitBytes = 100 * 1024 * 1024

/** Room for the form's fields and part headers beside the files, when the whole body is capped while it is read. */
const formOverheadBytes = 1024 * 1024

/**
 * The parser counts a part's headers into its size, so each part is capped a little above the limit while it
 * streams in; the files' exact total is checked once they are staged (a file of exactly the limit is accepted).
 */
const partHeadersBytes = 64 * 1024

/**
 * An upload's `file` parts are held in memory while together they come to no more than this; past it, a part is
 * staged on disk as raw leaves as it streams in (`LeafWriter`: hashed and written a 1 MiB leaf at a time, in a
 * temporary directory under `DATA_DIR/staging`, so the embedded store can rename them into its blockstore). Small uploads then cost no temporary directory, file, stat, read-back
 * or removal (docs/performance.md, "bench:upload"), and a request never holds more than this in memory.
 */
const inMemoryBytes = 4 * 1024 * 1024

/** The first bytes of a file whose type is sniffed: what the first read of a staged file gave before. */
const sniffBytes = 64 * 1024

/** The files of one multipart upload come to more than `multipartLimitBytes`. */
class UploadTooLarge extends Schema.TaggedError<UploadTooLarge>()("UploadTooLarge", {}) {
  readonly status = 413
  override readonly message = "File too large"
}

/** What a browser may send to a presigned upload URL from another origin (the SDK's headers among them). */
const corsHeaders = {
  "access-control-allow-origin": "*",
  "access-control-allow-methods": "POST, OPTIONS",
  "access-control-allow-headers": "Authorization, Content-Type, Source",
  "access-control-max-age": "600"
}

/** What an upload naming a group that is not the caller's on its network answers, for the route catalog. */
const groupNotFound = new Group.GroupNotFound({ groupId: "" })

/** What an upload answers below the disk reserve, for the route catalog. */
const insufficientStorage = new DiskSpace.InsufficientStorage({ freeBytes: 0, reserveBytes: 0, bytes: 0 })

/** One `file` part of a multipart upload: its pieces in memory (never joined), or staged on disk as raw leaves. */
type Part = {
  readonly name: string
  readonly contentType: string
  readonly size: number
} & ({ readonly _tag: "Memory"; readonly held: HeldPieces } | { readonly _tag: "Staged"; readonly staged: StagedLeaves })

/** Whether the parts are a folder: several files, or one whose filename is a path. */
const isFolder = (parts: ReadonlyArray<Part>) => parts.length > 1 || parts[0]!.name.includes("/")

/**
 * How long an upload's staging directory is kept after its last write before a start removes it as a crash's
 * leftover (a live upload writes a leaf every few milliseconds; the directory may be shared with other servers'
 * tests, so nothing newer goes).
 */
const stagingKeptMillis = 60 * 60 * 1000

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

/** The list's query, for the route catalog (`keyvalues[<key>]` filters besides). */
const ListQueryParams = Schema.Struct({
  order: Schema.optionalKey(Schema.Literals(["ASC", "DESC"])),
  limit: Schema.optionalKey(Schema.String),
  name: Schema.optionalKey(Schema.String),
  cid: Schema.optionalKey(Schema.String),
  mimeType: Schema.optionalKey(Schema.String),
  group: Schema.optionalKey(Schema.String),
  pageToken: Schema.optionalKey(Schema.String)
})

const FileEnvelope = Schema.Struct({ data: FileWire.File })
const FileListEnvelope = Schema.Struct({ data: Schema.Struct({ files: Schema.Array(FileWire.File), next_page_token: Schema.NullOr(Schema.String) }) })
const NullEnvelope = Schema.Struct({ data: Schema.Null })

/** A presigned upload URL's query (SignedUrlQuery.ts), for the route catalog. */
const SignedUploadQuery = Schema.Struct({
  "X-Algorithm": Schema.optionalKey(Schema.String),
  "X-Date": Schema.optionalKey(Schema.String),
  "X-Expires": Schema.optionalKey(Schema.String),
  "X-Method": Schema.optionalKey(Schema.String),
  "X-Signature": Schema.String
})

/** What a presigned upload was signed for, and its grant's id (its one use). */
interface Signed {
  readonly terms: SignedUrl.UploadTerms
  readonly grantId: string
}

const UpdateBody = Schema.Struct({
  name: Schema.optional(Schema.String.pipe(Schema.check(Schema.isMinLength(1)))),
  keyvalues: Schema.optional(File.KeyValues)
})

export const layer = HttpRouter.use((router) =>
  Effect.gen(function*() {
    const keys = yield* ApiKeys
    const files = yield* Files
    const signedUrls = yield* SignedUrls
    const reserve = yield* DiskReserve
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const dataDir = yield* Config.String("DATA_DIR").pipe(Config.withDefault("./data"))
    const resumable = yield* ResumableUploads.make({ directory: path.join(dataDir, "uploads"), files, reserve, fs })
    // Beside the blockstores (same filesystem: staged leaves are renamed into them).
    const stagingRoot = path.join(dataDir, "staging")
    yield* StaleEntries.sweep(fs, stagingRoot, stagingKeptMillis).pipe(
      Effect.catch((error) => Effect.logWarning("Could not sweep upload staging", error))
    )

    /**
     * The form's string fields and its `file` parts. Each file, and the whole body, is capped while it streams in
     * (413); the files' total is checked once they are staged.
     */
    const readForm = <TooLarge = UploadTooLarge>(
      request: HttpServerRequest.HttpServerRequest,
      limit = multipartLimitBytes,
      tooLarge: () => TooLarge | UploadTooLarge = () => new UploadTooLarge()
    ) =>
      Effect.gen(function*() {
        // A body whose declared length already passes every cap is refused before a byte of it is read.
        if (Body.declaresMoreThan(request, limit + formOverheadBytes)) return yield* Effect.fail(tooLarge())
        // Parts past `inMemoryBytes` are staged on the data directory's disk as they arrive: room is asked first.
        yield* reserve.ensureRoom(Body.declaredLength(request) ?? 0)
        const fields: Record<string, string> = {}
        const parts: Array<Part> = []
        const memory = { held: 0 }
        yield* Stream.runForEach(request.multipartStream, (part) => {
          if (part._tag === "Field") {
            // A field given twice counts as given first.
            if (!(part.key in fields)) fields[part.key] = part.value
            return Effect.void
          }
          if (part.key !== "file" || part.name === "") return Stream.runDrain(part.content)
          return Effect.map(stage(part, memory), (staged) => {
            parts.push(staged)
          })
        }).pipe(
          Effect.provideService(Multipart.MaxFileSize, ByteSize.bytes(limit + partHeadersBytes)),
          Effect.provideService(HttpIncomingMessage.MaxBodySize, ByteSize.bytes(limit + formOverheadBytes))
        )
        let total = 0
        for (const part of parts) total += part.size
        if (total > limit) return yield* Effect.fail(tooLarge())
        return { fields, parts }
      })

    const staging = (cause: unknown) => new ContentStoreUnavailable({ operation: "stage", cause })

    /** A leaf writer in a temporary directory of its own, removed with the request's scope. */
    const leafWriter = Effect.gen(function*() {
      yield* fs.makeDirectory(stagingRoot, { recursive: true })
      return new LeafWriter(yield* fs.makeTempDirectoryScoped({ directory: stagingRoot }))
    }).pipe(Effect.mapError(staging))

    /**
     * A `file` part's bytes, in memory while the request's parts held so far stay within `inMemoryBytes`, else staged
     * as raw leaves as it streams in. The parser hands pieces over in arrays: each array is one step, and a step
     * waits only when a leaf is complete and too many before it are still being written.
     */
    const stage = (part: Multipart.File, memory: { held: number }) =>
      Effect.gen(function*() {
        const chunks: Array<Uint8Array> = []
        let size = 0
        let writer: LeafWriter | undefined
        /** Moves the pieces held in memory into a new leaf writer: this part has passed the in-memory limit. */
        const openWriter = Effect.gen(function*() {
          const opened = yield* leafWriter
          writer = opened
          memory.held -= size
          for (const held of chunks.splice(0)) yield* written(opened.write(held))
        })
        // Most steps end without an effect: one is made only to open the writer or to wait for a leaf's write.
        const take = (pieces: ReadonlyArray<Uint8Array>, from: number): Effect.Effect<void, ContentStoreUnavailable, Scope.Scope> => {
          for (let i = from; i < pieces.length; i++) {
            const piece = pieces[i]!
            // Frees the socket's spent buffers with a scavenge now and then, not a mark-compact (YoungGenerationGc.ts).
            bodyBytesRead(piece.byteLength)
            if (writer === undefined) {
              if (memory.held + piece.byteLength > inMemoryBytes) return Effect.flatMap(openWriter, () => take(pieces, i))
              chunks.push(piece)
              memory.held += piece.byteLength
              size += piece.byteLength
              continue
            }
            size += piece.byteLength
            const wait = writer.write(piece)
            if (wait !== undefined) return Effect.flatMap(written(wait), () => take(pieces, i + 1))
          }
          return Effect.void
        }
        yield* Stream.runForEachArray(part.content, (pieces) => take(pieces, 0))
        const { name, contentType } = part
        if (writer !== undefined) {
          const done = writer
          return { _tag: "Staged", name, contentType, size, staged: yield* Effect.tryPromise({ try: () => done.end(), catch: staging }) } as const
        }
        // Kept as the parser's pieces: the content store hashes and writes them as they are (HeldPieces.ts).
        return { _tag: "Memory", name, contentType, size, held: { pieces: chunks, size } } as const
      })

    /** Waits for a leaf write the writer asked to wait for (most pieces ask nothing). */
    const written = (wait: Promise<void> | undefined) =>
      wait === undefined ? Effect.void : Effect.tryPromise({ try: () => wait, catch: staging })

    /** A part's bytes as a stream (staged leaves say where they are, so the embedded store takes them as they are). */
    const partContent = (part: Part) => part._tag === "Memory" ? heldContent(part.held) : stagedContent(part.staged)

    /** The start of a part, to sniff its type from. */
    const partSample = (part: Part) =>
      part._tag === "Memory"
        ? Effect.succeed(heldStart(part.held, sniffBytes))
        : Effect.tryPromise({ try: () => readStagedStart(part.staged, sniffBytes), catch: staging })

    /** A part's type as the client gave it, or sniffed when the client's says nothing. */
    const mimeTypeOf = (part: Part, given: string | undefined) => {
      const declared = given ?? part.contentType
      return ContentType.isGeneric(declared) ? Effect.flatMap(partSample(part), ContentType.sniff) : Effect.succeed(declared)
    }

    /** Refused (400) unless a presigned upload's terms allow the type. */
    const allowedBy = (terms: SignedUrl.UploadTerms, mimeType: string) =>
      SignedUrl.allows(terms, mimeType) ? Effect.void : Effect.fail(new ValidationFailed({
        detail: `this signed URL does not allow files of type ${SignedUrl.essence(mimeType)} (allow_mime_types: ${terms.allowMimeTypes?.join(", ")})`
      }))

    /**
     * One file: its type as the client gave it, or sniffed when the client's says nothing. Through a presigned URL,
     * that type must be one its terms allow (400), and the upload is the URL's one use.
     */
    const uploadFile = (
      principal: Principal,
      part: Part,
      options: Omit<UploadOptions.UploadOptions, "name"> & { readonly name: string; readonly signed?: Signed }
    ) =>
      Effect.gen(function*() {
        const mimeType = yield* mimeTypeOf(part, options.mimeType)
        if (options.signed !== undefined) yield* allowedBy(options.signed.terms, mimeType)
        return yield* files.upload(principal, {
          network: options.network,
          name: options.name,
          mimeType,
          groupId: options.groupId,
          keyvalues: options.keyvalues,
          cidVersion: options.cidVersion,
          // No size for the reserve: the body's declared length was asked for before its parts were staged.
          content: partContent(part),
          ...(options.signed === undefined ? {} : { singleUse: options.signed.grantId })
        })
      })

    /** Several files, each at the path its filename gives, as one directory. */
    const uploadFolder = (principal: Principal, parts: ReadonlyArray<Part>, options: Omit<FolderUpload, "files">) =>
      Effect.gen(function*() {
        const folder = yield* Effect.forEach(parts, (part) =>
          Effect.map(
            part._tag === "Memory" ? Effect.succeed(heldBytes(part.held)) : Effect.tryPromise({ try: () => readStaged(part.staged), catch: staging }),
            (content) => ({ path: part.name, content })
          ))
        return yield* files.uploadFolder(principal, { ...options, files: folder })
      })

    const uploadMultipart = (request: HttpServerRequest.HttpServerRequest) =>
      Effect.gen(function*() {
        const principal = yield* requireScope(keys, request, "org:files:write")
        const { fields, parts } = yield* readForm(request)
        if (parts.length === 0) return yield* new ValidationFailed({ detail: "a file part named \"file\" is required" })
        const options = yield* UploadOptions.decode(fields)
        if (isFolder(parts)) return data(toWire(yield* uploadFolder(principal, parts, options)))
        const part = parts[0]!
        return data(toWire(yield* uploadFile(principal, part, { ...options, name: options.name ?? (part.name || "File from SDK") })))
      }).pipe(Effect.scoped)

    /**
     * An upload through a presigned URL: its grant (checked before the body is read), then the form within the
     * grant's size limit, stored with the grant's metadata and recorded as its one use. The form's own name, group
     * and key-values do not count (as on Pinata: only what was signed goes through); its network does when the
     * signer named none.
     */
    const uploadSigned = (request: HttpServerRequest.HttpServerRequest, grantId: string) =>
      Effect.gen(function*() {
        const presented = yield* SignedUrlQuery.read(new URL(request.url, "http://cairn").searchParams)
        const { principal, terms } = yield* signedUrls.openUpload(presented, grantId)
        if (request.headers["upload-length"] !== undefined) {
          return yield* new ValidationFailed({ detail: "a signed URL takes one multipart upload: the resumable protocol (files over 90 MiB) needs an API key" })
        }
        const { maxFileSize } = terms
        const signedLimit = maxFileSize !== undefined && maxFileSize < multipartLimitBytes
        const { fields, parts } = yield* readForm(
          request,
          signedLimit ? maxFileSize : multipartLimitBytes,
          () => signedLimit ? new SignedUrl.OverSignedLimit({ maxFileSize }) : new UploadTooLarge()
        )
        if (parts.length === 0) return yield* new ValidationFailed({ detail: "a file part named \"file\" is required" })
        const options = yield* UploadOptions.decode(fields)
        const signed: Signed = { terms, grantId }
        const common = { network: terms.network ?? options.network, groupId: terms.groupId ?? null, keyvalues: terms.keyvalues ?? {}, cidVersion: options.cidVersion }
        if (isFolder(parts)) {
          if (!SignedUrl.allows(terms, "directory")) {
            return yield* new ValidationFailed({ detail: "this signed URL does not allow folders: its allow_mime_types lacks \"directory\"" })
          }
          // The files in it are held to the listed types too (`["directory", "text/plain"]`: a folder of text).
          if (terms.allowMimeTypes !== undefined && !terms.allowMimeTypes.every((type) => SignedUrl.essence(type) === "directory")) {
            for (const part of parts) yield* Effect.flatMap(mimeTypeOf(part, undefined), (mimeType) => allowedBy(terms, mimeType))
          }
          return data(toWire(yield* uploadFolder(principal, parts, { ...common, name: terms.filename, singleUse: grantId })))
        }
        const part = parts[0]!
        return data(toWire(yield* uploadFile(principal, part, { ...common, mimeType: options.mimeType, name: terms.filename ?? (part.name || "File from SDK"), signed })))
      }).pipe(Effect.scoped)

    /** The legacy pin: a folder as on /v3, or a single file (unless it is to be wrapped in a directory). */
    const pinFileToIPFS = (request: HttpServerRequest.HttpServerRequest) =>
      Effect.gen(function*() {
        const principal = yield* requireScope(keys, request, "org:files:write")
        const { fields, parts } = yield* readForm(request)
        if (parts.length === 0) return yield* new ValidationFailed({ detail: "a file part named \"file\" is required" })
        const legacy = yield* LegacyPinning.decode(fields)
        const options = { network: "public" as const, groupId: legacy.groupId, keyvalues: legacy.keyvalues, cidVersion: legacy.cidVersion }
        const pinned = isFolder(parts) || legacy.wrapWithDirectory
          ? yield* uploadFolder(principal, parts, { ...options, name: legacy.name, wrapWithDirectory: legacy.wrapWithDirectory })
          : yield* uploadFile(principal, parts[0]!, { ...options, mimeType: undefined, name: legacy.name ?? (parts[0]!.name || "File from SDK") })
        return json(LegacyPinning.toLegacyWire(pinned))
      }).pipe(Effect.scoped)

    yield* RouteCatalog.add(router, { method: "POST", path: "/v3/files", summary: "Upload a file or a folder (multipart), or start a resumable upload (Upload-Length)", auth: "apiKey", scope: "org:files:write", body: { contentType: "multipart/form-data", description: "`file` part(s) and the pinata SDK's fields: network, name, group_id, keyvalues, cid_version" }, headers: [{ name: "Upload-Length", description: "starts a resumable upload of this many bytes (201, Location)" }, { name: "Upload-Metadata" }], response: { schema: FileEnvelope }, otherResponses: [{ status: 201, schema: ResumableUploads.Started, description: "A resumable upload started: its absolute Location, Upload-Offset 0" }], errors: [new UploadTooLarge(), insufficientStorage, groupNotFound] }, (request) =>
      handled(Effect.gen(function*() {
        if (request.headers["upload-length"] !== undefined) return yield* resumable.create(keys, request)
        return yield* uploadMultipart(request)
      })))
    yield* RouteCatalog.add(router, { method: "POST", path: "/pinning/pinFileToIPFS", summary: "Pinata's legacy pin (the SDK's fileArray)", auth: "apiKey", scope: "org:files:write", body: { contentType: "multipart/form-data", description: "`file` parts, pinataMetadata and pinataOptions as JSON" }, response: { schema: LegacyPinning.LegacyWire }, errors: [new UploadTooLarge(), insufficientStorage, groupNotFound] }, (request) => handled(pinFileToIPFS(request)))
    yield* RouteCatalog.add(router, { method: "POST", path: "/v3/files/signed/:grantId", summary: "Upload through a presigned URL: one upload, no key (the URL's X-Signature is the credential)", auth: "none", body: { contentType: "multipart/form-data", description: "`file` part(s), as to POST /v3/files; the name, group and key-values are the URL's" }, query: SignedUploadQuery, response: { schema: FileEnvelope }, errors: [new SignedUrl.SignedUrlRefused({ reason: "used" }), new SignedUrl.OverSignedLimit({ maxFileSize: 0 }), new UploadTooLarge(), insufficientStorage, groupNotFound] }, (request) =>
      Effect.map(
        handled(Effect.flatMap(HttpRouter.params, (params) => uploadSigned(request, params["grantId"] ?? ""))),
        (response) => HttpServerResponse.setHeader(response, "access-control-allow-origin", "*")
      ))
    // A browser's preflight before it posts the SDK's form (with its Authorization and Source headers) from another origin.
    yield* router.add("OPTIONS", "/v3/files/signed/:grantId", HttpServerResponse.empty({ status: 204, headers: corsHeaders }))
    yield* RouteCatalog.add(router, { method: "PATCH", path: "/v3/files/uploads/:uploadId", summary: "Append a chunk to a resumable upload", auth: "apiKey", scope: "org:files:write", body: { contentType: "application/offset+octet-stream" }, headers: [{ name: "Upload-Offset", required: true }], response: { status: 204 }, errors: ResumableUploads.errors }, (request) =>
      handled(Effect.flatMap(HttpRouter.params, (params) => resumable.append(keys, request, params["uploadId"] ?? ""))))
    yield* RouteCatalog.add(router, { method: "GET", path: "/v3/files/uploads/:uploadId", summary: "A resumable upload's offset", auth: "apiKey", scope: "org:files:write", response: { status: 204 }, errors: ResumableUploads.errors }, (request) =>
      handled(Effect.flatMap(HttpRouter.params, (params) => resumable.status(keys, request, params["uploadId"] ?? ""))))

    yield* RouteCatalog.add(router, { method: "GET", path: "/v3/files/:network", summary: "List files", auth: "apiKey", scope: "org:files:read", query: ListQueryParams, response: { schema: FileListEnvelope } }, (request) =>
      handled(Effect.gen(function*() {
        const principal = yield* requireScope(keys, request, "org:files:read")
        const network = yield* decodeNetwork(yield* HttpRouter.params)
        const page = yield* files.list(principal, network, yield* listQuery(request))
        return data({ files: page.files.map(toWire), next_page_token: page.nextPageToken })
      })))

    yield* RouteCatalog.add(router, { method: "GET", path: "/v3/files/:network/:id", summary: "Get a file", auth: "apiKey", scope: "org:files:read", response: { schema: FileEnvelope }, errors: [new File.FileNotFound({ fileId: "" })] }, (request) =>
      handled(Effect.gen(function*() {
        const principal = yield* requireScope(keys, request, "org:files:read")
        const params = yield* HttpRouter.params
        const network = yield* decodeNetwork(params)
        return data(toWire(yield* files.get(principal, network, params["id"] ?? "")))
      })))

    yield* RouteCatalog.add(router, { method: "PUT", path: "/v3/files/:network/:id", summary: "Rename a file or change its key-values", auth: "apiKey", scope: "org:files:write", body: { schema: UpdateBody }, response: { schema: FileEnvelope }, errors: [new File.FileNotFound({ fileId: "" })] }, (request) =>
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

    yield* RouteCatalog.add(router, { method: "DELETE", path: "/v3/files/:network/:id", summary: "Delete a file", auth: "apiKey", scope: "org:files:write", response: { schema: NullEnvelope }, errors: [new File.FileNotFound({ fileId: "" })] }, (request) =>
      handled(Effect.gen(function*() {
        const principal = yield* requireScope(keys, request, "org:files:write")
        const params = yield* HttpRouter.params
        const network = yield* decodeNetwork(params)
        yield* files.remove(principal, network, params["id"] ?? "")
        return json({ data: null })
      })))
  })
)
