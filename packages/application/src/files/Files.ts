/**
 * Files: upload (content into the store, then the file and its CID record decided and appended together), folder
 * upload (the files as one UnixFS directory, recorded as one file of mime type `directory`), list with filters and
 * keyset pagination, get, update and delete (the file and the release of its CID, together). Every file is scoped
 * to the caller's workspace and network; reads come from the files table. Nothing is stored while the data
 * directory's disk is below its reserve (507 Insufficient storage, DiskReserve.ts). An upload through a presigned URL
 * records the URL's one use in the same append (`singleUse`), so of two uploads racing on one URL only one is recorded.
 */
import { ContentStore, type DirectoryFile, directoryPathProblem } from "@cairn/content-store"
import { CidRecord, File, type Network, PinJob, Reservation, SignedUrl, ValidationFailed } from "@cairn/domain"
import { Context, Effect, Layer, Option, type Stream } from "effect"
import { SqlClient } from "effect/sql"
import type { Principal } from "../Access.ts"
import { CommandHandler, decision, emptyStream, unreadDecision } from "../CommandHandler.ts"
import { DiskReserve } from "../DiskReserve.ts"
import { now } from "../Now.ts"
import * as FilesTable from "../readmodels/FilesTable.ts"

export type { FileView } from "../readmodels/FilesTable.ts"

export interface Upload {
  readonly network: Network
  readonly name: string
  readonly mimeType: string
  readonly groupId: string | null
  readonly keyvalues: File.KeyValues
  readonly cidVersion: 0 | 1
  readonly content: Stream.Stream<Uint8Array, unknown>
  /**
   * The bytes storing the content will add to the data directory's disk, when known before it is read (asked of the
   * disk reserve); otherwise only room above the reserve is asked for.
   */
  readonly size?: number
  /** The grant of the presigned upload this upload goes through: its one use, claimed in the append (403 `used`). */
  readonly singleUse?: string
}

/** The mime type a folder's file record carries, as Pinata reports it. */
const folderMimeType = "directory"

/** A folder's name when neither the client nor the paths give one: what the pinata SDK calls an unnamed folder. */
const defaultFolderName = "folder_from_sdk"

export interface FolderUpload {
  readonly network: Network
  /** The record's name; when undefined, the folder's own name (the paths' common first segment). */
  readonly name: string | undefined
  readonly groupId: string | null
  readonly keyvalues: File.KeyValues
  readonly cidVersion: 0 | 1
  /**
   * The files at the paths the client gave: relative, `/`-separated. When every path starts with the same folder
   * (the SDK sends `<folder>/<name>`), the directory is that folder's contents, unless `wrapWithDirectory`.
   */
  readonly files: ReadonlyArray<DirectoryFile>
  /** Keep the common folder as the directory's one entry (pinFileToIPFS's `wrapWithDirectory`). */
  readonly wrapWithDirectory?: boolean
  /** As an `Upload`'s. */
  readonly singleUse?: string
}

/** The first segment every path shares, when every path lies under it; undefined otherwise. */
const commonFolder = (paths: ReadonlyArray<string>): string | undefined => {
  const first = paths[0]?.split("/")[0]
  return first !== undefined && paths.every((path) => path.startsWith(`${first}/`)) ? first : undefined
}

export interface ListQuery {
  readonly name?: string
  readonly cid?: string
  readonly mimeType?: string
  /** A group id, or null for files in no group. */
  readonly group?: string | null
  readonly keyvalues?: File.KeyValues
  readonly order: "ASC" | "DESC"
  readonly limit: number
  readonly pageToken?: string
}

/** Page tokens are opaque to clients: the (createdAt, id) of the last file of the previous page. */
// The token's JSON is ASCII (an ISO date and a UUID), so btoa/atob suffice and work on every runtime.
const encodeToken = (file: FilesTable.FileView) =>
  btoa(JSON.stringify([file.createdAt, file.id])).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "")
const decodeToken = (token: string): Option.Option<FilesTable.Cursor> => {
  try {
    const value: unknown = JSON.parse(atob(token.replace(/-/g, "+").replace(/_/g, "/")))
    return Array.isArray(value) && value.length === 2 && typeof value[0] === "string" && typeof value[1] === "string" &&
        !Number.isNaN(Date.parse(value[0]))
      ? Option.some({ createdAt: value[0], id: value[1] })
      : Option.none()
  } catch {
    return Option.none()
  }
}

/** A file as its upload record has it now: what a response right after a command shows. */
const toView = (file: File.FileUploaded): FilesTable.FileView => ({
  id: file.fileId,
  name: file.name,
  cid: file.cid,
  size: file.size,
  numberOfFiles: file.numberOfFiles,
  mimeType: file.mimeType,
  keyvalues: file.keyvalues,
  groupId: file.groupId,
  createdAt: file.at,
  network: file.network,
  userId: file.userId
})

/** The file a decision left stored (update only succeeds on a stored file). */
const storedFile = (state: File.FileState) => (state as Extract<File.FileState, { _tag: "Stored" }>).file

export class Files extends Context.Service<Files>()("cairn/Files", {
  make: Effect.gen(function*() {
    const commands = yield* CommandHandler
    const files = FilesTable.queries(yield* SqlClient.SqlClient)
    const content = yield* ContentStore
    const reserve = yield* DiskReserve

    /** Records stored content as a new file of the caller's, with the CID's upload, in one append. */
    const record = Effect.fnUntraced(function*(principal: Principal, stored: {
      readonly network: Network
      readonly cid: string
      readonly size: number
      readonly name: string
      readonly mimeType: string
      readonly groupId: string | null
      readonly keyvalues: File.KeyValues
      readonly numberOfFiles: number
    }, singleUse: string | undefined) {
      const fileId = crypto.randomUUID()
      const at = yield* now
      const { workspaceId, userId } = principal
      const { network, cid } = stored
      // Neither stream is read: the file's id was generated just above, so its stream is empty (the guard at 0
      // still says so), and a CID's record takes every upload of a new file id whatever it holds.
      const upload = decision(File.decider, File.stream(fileId), new File.UploadFile({ fileId, workspaceId, userId, ...stored, at }), emptyStream(File.decider))
      const cidUpload = unreadDecision(CidRecord.decider, CidRecord.stream(network, cid), new CidRecord.RecordCidUpload({ cid, network, workspaceId, fileId, at }))
      // A presigned URL's use is read and guarded: of two uploads claiming it, the second decides again and is refused.
      const metadata = { actor: userId }
      const appended = singleUse === undefined
        ? Effect.map(commands.executeAll([upload, cidUpload], metadata), ([file]) => file.state)
        : Effect.map(
          commands.executeAll([
            upload,
            cidUpload,
            decision(Reservation.decider, SignedUrl.useReservation(singleUse), new Reservation.ClaimReservation({ owner: fileId, at }))
          ], metadata),
          ([file]) => file.state
        )
      const state = yield* appended.pipe(
        // A fresh file id is never taken and a CID upload is never refused: a refusal here is a bug, not the
        // client's doing. Only a lost race, an unreachable store and a presigned URL used already are failures an
        // upload reports (which also keeps domain error types out of the inferred types the HTTP package exports).
        Effect.catchTag(
          ["TooMuchContention", "EventStoreUnavailable"],
          (failure) => Effect.fail(failure),
          (refusal) => refusal._tag === "ReservationTaken" ? Effect.fail(new SignedUrl.SignedUrlRefused({ reason: "used" })) : Effect.die(refusal)
        )
      )
      return toView(storedFile(state))
    })

    const upload = Effect.fn("Files.upload")(function*(principal: Principal, input: Upload) {
      yield* reserve.ensureRoom(input.size ?? 0)
      const added = yield* content.add(input.content, { network: input.network, cidVersion: input.cidVersion })
      return yield* record(principal, {
        network: input.network,
        cid: added.cid,
        size: added.size,
        name: input.name,
        mimeType: input.mimeType,
        groupId: input.groupId,
        keyvalues: input.keyvalues,
        numberOfFiles: 1
      }, input.singleUse)
    })

    /**
     * Stores a folder as one UnixFS directory and records it as one file: `number_of_files` the files in it, `size`
     * their bytes, mime type `directory`. Paths are checked before anything is stored (400 Validation failed).
     */
    const uploadFolder = Effect.fn("Files.uploadFolder")(function*(principal: Principal, input: FolderUpload) {
      if (input.files.length === 0) return yield* new ValidationFailed({ detail: "a folder needs at least one file" })
      const paths = input.files.map((file) => file.path)
      const problem = directoryPathProblem(paths)
      if (problem !== undefined) {
        return yield* new ValidationFailed({ detail: `file path ${JSON.stringify(problem.path)} ${problem.reason}` })
      }
      const folder = commonFolder(paths)
      const files = folder === undefined || input.wrapWithDirectory === true
        ? input.files
        : input.files.map((file) => ({ path: file.path.slice(folder.length + 1), content: file.content }))
      yield* reserve.ensureRoom(files.reduce((total, file) => total + file.content.byteLength, 0))
      const added = yield* content.addDirectory(files, { network: input.network, cidVersion: input.cidVersion }).pipe(
        // The paths were checked above with the store's own rules.
        Effect.catchTag("InvalidDirectoryPath", (refusal) => Effect.die(refusal))
      )
      return yield* record(principal, {
        network: input.network,
        cid: added.cid,
        size: added.size,
        name: input.name ?? folder ?? defaultFolderName,
        mimeType: folderMimeType,
        groupId: input.groupId,
        keyvalues: input.keyvalues,
        numberOfFiles: files.length
      }, input.singleUse)
    })

    const list = Effect.fn("Files.list")(function*(principal: Principal, network: Network, query: ListQuery) {
      const after = query.pageToken === undefined || query.pageToken === "" ? Option.none<FilesTable.Cursor>() : decodeToken(query.pageToken)
      if (query.pageToken && Option.isNone(after)) return yield* new ValidationFailed({ detail: "pageToken is not a token this service issued" })
      // One file more than the page holds tells whether there is a next page.
      const found = yield* files.page({
        workspaceId: principal.workspaceId,
        network,
        ...(query.name === undefined ? {} : { name: query.name }),
        ...(query.cid === undefined ? {} : { cid: query.cid }),
        ...(query.mimeType === undefined ? {} : { mimeType: query.mimeType }),
        ...(query.group === undefined ? {} : { group: query.group }),
        ...(query.keyvalues === undefined ? {} : { keyvalues: query.keyvalues }),
        order: query.order,
        after,
        limit: query.limit + 1
      })
      const page = found.slice(0, query.limit)
      return {
        files: page,
        nextPageToken: found.length > query.limit ? encodeToken(page[page.length - 1]!) : ""
      }
    })

    const get = (principal: Principal, network: Network, fileId: string) =>
      files.byId(fileId, { workspaceId: principal.workspaceId, network }).pipe(
        Effect.flatMap(Option.match({
          onNone: () => Effect.fail(new File.FileNotFound({ fileId })),
          onSome: Effect.succeed
        }))
      )

    const update = Effect.fn("Files.update")(function*(
      principal: Principal,
      network: Network,
      fileId: string,
      change: { readonly name?: string; readonly keyvalues?: File.KeyValues }
    ) {
      const command = new File.UpdateFile({
        fileId,
        workspaceId: principal.workspaceId,
        network,
        ...(change.name === undefined ? {} : { name: change.name }),
        ...(change.keyvalues === undefined ? {} : { keyvalues: change.keyvalues }),
        at: yield* now
      })
      const { state } = yield* commands.execute(File.decider, File.stream(fileId), command, { actor: principal.userId })
      return toView(storedFile(state))
    })

    const remove = Effect.fn("Files.remove")(function*(principal: Principal, network: Network, fileId: string) {
      const { workspaceId, userId } = principal
      // The CID to release is the file's own, which never changes: read it first, then decide both streams.
      const loaded = yield* commands.load(File.decider, File.stream(fileId))
      const { cid } = yield* Effect.fromResult(File.visible(loaded.state, fileId, workspaceId, network))
      const at = yield* now
      yield* commands.executeAll([
        decision(File.decider, File.stream(fileId), new File.DeleteFile({ fileId, workspaceId, network, at }), loaded),
        decision(CidRecord.decider, CidRecord.stream(network, cid), new CidRecord.ReleaseCid({ cid, network, workspaceId, fileId, at }))
      ], { actor: userId })
    })

    /** Whether any workspace holds a live file of this CID on the public network: what the gateway may serve. */
    const isPublic = (cid: string) => files.isPublic(cid)

    /** Whether this workspace holds a live file of this CID on this network (what a private access link reaches). */
    const holds = (workspaceId: string, network: Network, cid: string) => files.holds({ workspaceId, network }, cid)

    /**
     * Records a pinned CID (its blocks stored already) as a new file of the job's workspace, with the CID's upload and
     * the job's `PinJobPinned`, in one append: a job is pinned exactly when its file is recorded. A job cancelled
     * meanwhile refuses it (PinJobFinished), and nothing is recorded.
     */
    const recordPin = Effect.fn("Files.recordPin")(function*(job: {
      readonly jobId: string
      readonly workspaceId: string
      readonly userId: string
      readonly network: Network
      readonly cid: string
      readonly size: number
      readonly name: string
      readonly mimeType: string
      readonly groupId: string | null
      readonly keyvalues: File.KeyValues
      readonly numberOfFiles: number
    }) {
      const fileId = crypto.randomUUID()
      const at = yield* now
      const { jobId, workspaceId, userId, network, cid, size, name, mimeType, groupId, keyvalues, numberOfFiles } = job
      yield* commands.executeAll([
        decision(File.decider, File.stream(fileId), new File.UploadFile({ fileId, workspaceId, userId, network, cid, size, name, mimeType, groupId, keyvalues, numberOfFiles, at }), emptyStream(File.decider)),
        unreadDecision(CidRecord.decider, CidRecord.stream(network, cid), new CidRecord.RecordCidUpload({ cid, network, workspaceId, fileId, at })),
        decision(PinJob.decider, PinJob.stream(jobId), new PinJob.MarkPinned({ jobId, fileId, size, at }))
      ], { actor: userId }).pipe(
        Effect.catchTag(
          ["TooMuchContention", "EventStoreUnavailable", "PinJobFinished", "PinJobNotFound"],
          (failure) => Effect.fail(failure),
          (refusal) => Effect.die(refusal)
        )
      )
      return fileId
    })

    return { upload, uploadFolder, list, get, update, remove, isPublic, holds, recordPin }
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
