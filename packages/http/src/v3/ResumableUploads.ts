/**
 * Resumable uploads as the pinata SDK drives them for files over 90 MiB (TUS-like, without requiring a
 * `Tus-Resumable` header): `POST /v3/files` with `Upload-Length` and `Upload-Metadata` answers 201 and an absolute
 * `Location`; `PATCH <Location>` appends at `Upload-Offset`; the PATCH that completes the upload imports the file
 * and answers 204 with `upload-cid`; `GET <Location>` tells the offset to resume from (in `Upload-Offset`). Sessions are staged on
 * disk under `DATA_DIR/uploads/<id>` (bytes plus a JSON description), so they survive a restart of this node. The
 * start and each chunk ask the disk reserve for the bytes still to come (507 below it, DiskReserve.ts).
 */
import { ApiKeys, type DiskReserve, Files } from "@cairn/application"
import { bodyBytesRead } from "@cairn/content-store/node"
import { DiskSpace, Group, ValidationFailed } from "@cairn/domain"
import { Effect, type FileSystem, RcMap, Schema, Semaphore, Stream } from "effect"
import type { HttpServerRequest } from "effect/http"
import { requireScope } from "../Authenticate.ts"
import { json, noContent } from "../Respond.ts"
import * as ContentType from "../ContentType.ts"
import { origin } from "../Origin.ts"
import * as StaleEntries from "./StaleEntries.ts"
import { toWire } from "./FileWire.ts"
import * as UploadOptions from "./UploadOptions.ts"

/** The largest file Cairn accepts through the resumable protocol. */
export const maxUploadBytes = 25 * 1024 ** 3

/** A staged upload untouched for this long is abandoned, and swept when the server starts. */
export const abandonedAfterMillis = 24 * 60 * 60 * 1000

class UploadNotFound extends Schema.TaggedError<UploadNotFound>()("UploadNotFound", {}) {
  readonly status = 404
  override readonly message = "Upload not found"
}

class UploadTooLarge extends Schema.TaggedError<UploadTooLarge>()("UploadTooLarge", {}) {
  readonly status = 413
  override readonly message = "File too large"
}

class OffsetMismatch extends Schema.TaggedError<OffsetMismatch>()("OffsetMismatch", { expected: Schema.Number }) {
  readonly status = 409
  override get message() {
    return `Upload-Offset does not match: the upload is at ${this.expected}`
  }
}

/** What the protocol's PATCH and GET may answer, for the route catalog. */
export const errors = [new UploadNotFound(), new UploadTooLarge(), new OffsetMismatch({ expected: 0 }), new DiskSpace.InsufficientStorage({ freeBytes: 0, reserveBytes: 0, bytes: 0 }), new Group.GroupNotFound({ groupId: "" })]

const Session = Schema.Struct({
  workspaceId: Schema.String,
  length: Schema.Number,
  fields: Schema.Record(Schema.String, Schema.String)
})
type Session = typeof Session.Type

const decodeSession = Schema.decodeUnknownEffect(Schema.fromJsonString(Session))

/** A started upload's answer (201): its id; the `Location` header holds the URL its chunks go to. */
export const Started = Schema.Struct({ data: Schema.Struct({ id: Schema.String }) })

const wholeNumber = (value: string | undefined) => (value !== undefined && /^\d+$/.test(value) ? Number(value) : undefined)

/** `Upload-Metadata: key base64,key base64`: values are base64; a key may have no value. */
const parseMetadata = (header: string | undefined) =>
  Effect.try({
    try: () => {
      const fields: Record<string, string> = {}
      for (const pair of (header ?? "").split(",")) {
        const [key, value = ""] = pair.trim().split(/\s+/, 2)
        if (!key) continue
        if (value !== "" && !/^[A-Za-z0-9+/]*={0,2}$/.test(value)) throw new Error(key)
        fields[key] = new TextDecoder("utf-8", { fatal: true }).decode(Uint8Array.from(atob(value), (c) => c.charCodeAt(0)))
      }
      return fields
    },
    catch: () => new ValidationFailed({ detail: "Upload-Metadata must be comma-separated keys with base64 values" })
  })

export const make = (options: {
  readonly directory: string
  readonly files: Files["Service"]
  readonly reserve: DiskReserve["Service"]
  readonly fs: FileSystem.FileSystem
}) =>
  Effect.gen(function*() {
    const { directory, files, reserve, fs } = options
    // One writer per upload at a time; uploads are staged on this node's disk. Each lock lives only while a request
    // holds or awaits it, so ids that are never finished (or never existed) leave nothing behind.
    const locks = yield* RcMap.make({ lookup: (_id: string) => Semaphore.make(1) })
    const exclusively = (id: string) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      Effect.scoped(Effect.flatMap(RcMap.get(locks, id), (lock) => Semaphore.withPermit(lock)(effect)))
    const sessionPath = (id: string) => `${directory}/${id}.json`
    const dataPath = (id: string) => `${directory}/${id}.data`
    const validId = (id: string) => /^[0-9a-f-]{36}$/.test(id)

    // Sweep uploads abandoned before this start: their staged bytes would otherwise stay on disk for ever.
    const sweep = StaleEntries.sweep(fs, directory, abandonedAfterMillis).pipe(
      Effect.catch((error) => Effect.logWarning("Could not sweep abandoned uploads", error).pipe(Effect.as(0)))
    )
    const swept = yield* sweep
    if (swept > 0) yield* Effect.logInfo(`Swept ${swept} staging file(s) of abandoned uploads`)

    const load = (keys: ApiKeys["Service"], request: HttpServerRequest.HttpServerRequest, id: string) =>
      Effect.gen(function*() {
        const principal = yield* requireScope(keys, request, "org:files:write")
        if (!validId(id)) return yield* new UploadNotFound()
        const text = yield* fs.readFileString(sessionPath(id)).pipe(Effect.catch(() => Effect.fail(new UploadNotFound())))
        const session = yield* Effect.orDie(decodeSession(text))
        if (session.workspaceId !== principal.workspaceId) return yield* new UploadNotFound()
        const { size } = yield* fs.stat(dataPath(id)).pipe(Effect.orDie)
        return { principal, session, offset: Number(size) }
      })

    const create = (keys: ApiKeys["Service"], request: HttpServerRequest.HttpServerRequest) =>
      Effect.gen(function*() {
        const principal = yield* requireScope(keys, request, "org:files:write")
        const length = wholeNumber(request.headers["upload-length"])
        if (length === undefined) return yield* new ValidationFailed({ detail: "Upload-Length must be a whole number of bytes" })
        if (length > maxUploadBytes) return yield* new UploadTooLarge()
        const fields = yield* parseMetadata(request.headers["upload-metadata"])
        const cidVersion = new URL(request.url, "http://cairn").searchParams.get("X-Upload-Option-Cid-Version")
        if (cidVersion !== null) fields["cid_version"] = cidVersion
        // Refuse bad options, and a group that is not the caller's, now rather than after gigabytes.
        const options = yield* UploadOptions.decode(fields)
        yield* files.requireGroup(principal, options.network, options.groupId)
        yield* reserve.ensureRoom(length)
        const id = crypto.randomUUID()
        yield* fs.makeDirectory(directory, { recursive: true }).pipe(Effect.orDie)
        yield* fs.writeFile(dataPath(id), new Uint8Array()).pipe(Effect.orDie)
        const session: Session = { workspaceId: principal.workspaceId, length, fields }
        yield* fs.writeFileString(sessionPath(id), JSON.stringify(session)).pipe(Effect.orDie)
        return json({ data: { id } } satisfies typeof Started.Type, 201, { location: `${origin(request)}/v3/files/uploads/${id}`, "upload-offset": "0" })
      })

    const complete = (id: string, principal: Parameters<Files["Service"]["upload"]>[0], session: Session) =>
      Effect.gen(function*() {
        const options = yield* UploadOptions.decode(session.fields)
        const uploaded = yield* files.upload(principal, {
          network: options.network,
          name: options.name ?? "File from SDK",
          mimeType: ContentType.isGeneric(options.mimeType) ? yield* ContentType.sniffStream(fs.stream(dataPath(id))) : options.mimeType!,
          groupId: options.groupId,
          keyvalues: options.keyvalues,
          cidVersion: options.cidVersion,
          content: fs.stream(dataPath(id)),
          size: session.length // copied into the store while the staged bytes are still on disk
        })
        yield* Effect.all([fs.remove(dataPath(id)), fs.remove(sessionPath(id))]).pipe(Effect.ignore)
        return uploaded
      })

    const append = (keys: ApiKeys["Service"], request: HttpServerRequest.HttpServerRequest, id: string) =>
      Effect.gen(function*() {
        const { principal, session, offset } = yield* load(keys, request, id)
        const claimed = wholeNumber(request.headers["upload-offset"])
        if (claimed === undefined) return yield* new ValidationFailed({ detail: "Upload-Offset must be a whole number of bytes" })
        if (claimed !== offset) return yield* new OffsetMismatch({ expected: offset })
        yield* reserve.ensureRoom(session.length - offset)
        let written = offset
        yield* Effect.scoped(Effect.gen(function*() {
          const file = yield* fs.open(dataPath(id), { flag: "a" }).pipe(Effect.orDie)
          yield* request.stream.pipe(
            Stream.runForEach((chunk) =>
              written + chunk.length > session.length
                ? Effect.fail(new ValidationFailed({ detail: "the chunk goes past Upload-Length" }))
                : Effect.map(Effect.orDie(file.write(chunk)), () => {
                  written += chunk.length
                  // Frees the socket's spent buffers with a scavenge now and then, not a mark-compact.
                  bodyBytesRead(chunk.length)
                })
            )
          )
        })).pipe(
          // A refused or broken chunk leaves the upload where it was, so the client can resume from `offset`.
          Effect.tapError(() => fs.truncate(dataPath(id), offset).pipe(Effect.ignore))
        )
        if (written < session.length) return noContent({ "upload-offset": String(written) })
        const uploaded = yield* complete(id, principal, session)
        return noContent({ "upload-offset": String(written), "upload-cid": uploaded.cid, "upload-id": toWire(uploaded).id })
      }).pipe(exclusively(id))

    const status = (keys: ApiKeys["Service"], request: HttpServerRequest.HttpServerRequest, id: string) =>
      Effect.map(load(keys, request, id), ({ session, offset }) =>
        noContent({ "upload-offset": String(offset), "upload-length": String(session.length), "cache-control": "no-store" }))

    return { create, append, status }
  })
