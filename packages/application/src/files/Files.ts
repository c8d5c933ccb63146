/**
 * Files: upload (content into the store, then the file and its CID record decided and appended together, with its
 * group required there when it names one: an unknown group is 404 Group not found, checked before anything is
 * stored), folder upload (the files as one UnixFS directory, recorded as one file of mime type `directory`), list
 * with filters and keyset pagination, get, update and delete (the file and the release of its CID, together). Every file is scoped
 * to the caller's workspace and network; reads come from the files table. Nothing is stored while the data
 * directory's disk is below its reserve (507 Insufficient storage, DiskReserve.ts). An upload through a presigned URL
 * records the URL's one use in the same append (`singleUse`), so of two uploads racing on one URL only one is recorded.
 */
import { ContentStore, type DirectoryFile, directoryPathProblem } from "@cairn/content-store"
import { CidRecord, File, Group, type Network, PinJob, Reservation, SignedUrl, ValidationFailed } from "@cairn/domain"
import { Context, Effect, Layer, Option, type Stream } from "effect"
import { SqlClient } from "effect/sql"
import type { Principal } from "../Access.ts"
import { CommandHandler, decision, emptyStream, unreadDecision } from "../CommandHandler.ts"
import { DiskReserve } from "../DiskReserve.ts"
import { now } from "../Now.ts"
import * as FilesTable from "../readmodels/FilesTable.ts"
import * as PageTokens from "./PageTokens.ts"

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

/** Pinata's legacy `pinList` filters (FilesTable.ts says how each one matches). */
export type LegacyListQuery = Omit<FilesTable.LegacyPageQuery, "workspaceId" | "network">

export type { KeyValueCondition, KeyValueOp } from "../readmodels/FilesTable.ts"

/**
 * Whether a database failure is its refusal of a regular expression: SQLSTATE 2201B, which Postgres and PGlite
 * both carry as `code` down the failure's cause chain.
 */
const isInvalidRegularExpression = (failure: unknown): boolean => {
  let current: unknown = failure
  for (let depth = 0; depth < 8 && typeof current === "object" && current !== null; depth++) {
    if ((current as { readonly code?: unknown }).code === "2201B") return true
    current = (current as { readonly cause?: unknown }).cause
  }
  return false
}

/** Content stored already, as a file records it. */
interface StoredFile {
  readonly network: Network
  readonly cid: string
  readonly size: number
  readonly name: string
  readonly mimeType: string
  readonly groupId: string | null
  readonly keyvalues: File.KeyValues
  readonly numberOfFiles: number
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
    const record = Effect.fnUntraced(function*(principal: Principal, stored: StoredFile, singleUse: string | undefined) {
      const fileId = crypto.randomUUID()
      const at = yield* now
      const { workspaceId, userId } = principal
      const { network, cid } = stored
      // Neither stream is read: the file's id was generated just above, so its stream is empty (the guard at 0
      // still says so), and a CID's record takes every upload of a new file id whatever it holds.
      const { groupId } = stored
      const [{ state }] = yield* commands.executeAll([
        decision(File.decider, File.stream(fileId), new File.UploadFile({ fileId, workspaceId, userId, ...stored, at }), emptyStream(File.decider)),
        unreadDecision(CidRecord.decider, CidRecord.stream(network, cid), new CidRecord.RecordCidUpload({ cid, network, workspaceId, fileId, at })),
        // The group, when one is named, must still be there as the file joins it (checked before storing, too).
        ...(groupId === null ? [] : [decision(Group.decider, Group.stream(groupId), new Group.RequireGroup({ groupId, workspaceId, network }))]),
        // A presigned URL's use is read and guarded: of two uploads claiming it, the second decides again and is refused.
        ...(singleUse === undefined
          ? []
          : [decision(Reservation.decider, SignedUrl.useReservation(singleUse), new Reservation.ClaimReservation({ owner: fileId, at }))])
      ], { actor: userId }).pipe(
        // A fresh file id is never taken and a CID upload is never refused: a refusal here is a bug, not the
        // client's doing. Only a group deleted meanwhile, a lost race, an unreachable store and a presigned URL used
        // already are failures an upload reports (which also keeps domain error types out of the inferred types the
        // HTTP package exports).
        Effect.catchTag(
          ["GroupNotFound", "TooMuchContention", "EventStoreUnavailable"],
          (failure) => Effect.fail(failure),
          (refusal) => refusal._tag === "ReservationTaken" ? Effect.fail(new SignedUrl.SignedUrlRefused({ reason: "used" })) : Effect.die(refusal)
        )
      )
      return toView(storedFile(state))
    })

    /**
     * Refuses a group that is not the caller's on the network (404 Group not found) before anything is stored; the
     * upload's own append requires it again. No group is always fine.
     */
    const requireGroup = (principal: Principal, network: Network, groupId: string | null) =>
      groupId === null
        ? Effect.void
        : Effect.flatMap(commands.load(Group.decider, Group.stream(groupId)), (loaded) =>
          Effect.fromResult(Group.visible(loaded.state, groupId, principal.workspaceId, network)))

    const upload = Effect.fn("Files.upload")(function*(principal: Principal, input: Upload) {
      yield* requireGroup(principal, input.network, input.groupId)
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
      yield* requireGroup(principal, input.network, input.groupId)
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
      const after = query.pageToken === undefined || query.pageToken === "" ? Option.none<FilesTable.Cursor>() : PageTokens.decode(query.pageToken)
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
        nextPageToken: found.length > query.limit ? PageTokens.encode(page[page.length - 1]!) : ""
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
      yield* commands.execute(File.decider, File.stream(fileId), command, { actor: principal.userId })
      // Read back rather than built from the file's record, whose group may be one deleted since (the table says none).
      return yield* get(principal, network, fileId)
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

    /** Pinata's legacy `pinList`: a page by offset with its filters, and how many files match in all. */
    const legacyList = Effect.fn("Files.legacyList")(function*(principal: Principal, network: Network, query: LegacyListQuery) {
      return yield* files.legacyPage({ ...query, workspaceId: principal.workspaceId, network }).pipe(
        Effect.catch((failure) =>
          // The one failure a client causes: a pattern the database's regular expressions refuse.
          isInvalidRegularExpression(failure)
            ? Effect.fail(new ValidationFailed({ detail: "a metadata keyvalues regexp is not a regular expression this service accepts" }))
            : Effect.die(failure)
        )
      )
    })

    /** The workspace's live files of this CID on this network; none is 404 CidNotPinned. */
    const pinnedAs = (principal: Principal, network: Network, cid: string) =>
      Effect.flatMap(files.byCid({ workspaceId: principal.workspaceId, network }, cid), (found) =>
        found.length === 0 ? Effect.fail(new File.CidNotPinned({ cid })) : Effect.succeed(found))

    /** Pinata's legacy `unpin`: deletes every file of this CID the workspace holds on the network. */
    const unpin = Effect.fn("Files.unpin")(function*(principal: Principal, network: Network, cid: string) {
      for (const file of yield* pinnedAs(principal, network, cid)) yield* remove(principal, network, file.id)
    })

    /**
     * Pinata's legacy `hashMetadata`: renames every file of this CID the workspace holds on the network, and merges
     * key-values into each one's (a key given as null is removed).
     */
    const updateByCid = Effect.fn("Files.updateByCid")(function*(
      principal: Principal,
      network: Network,
      cid: string,
      change: { readonly name?: string; readonly keyvalues?: Readonly<Record<string, string | null>> }
    ) {
      const updated: Array<FilesTable.FileView> = []
      for (const file of yield* pinnedAs(principal, network, cid)) {
        const keyvalues = change.keyvalues === undefined ? undefined : Object.fromEntries(
          Object.entries({ ...file.keyvalues, ...change.keyvalues }).filter((entry): entry is [string, string] => entry[1] !== null)
        )
        updated.push(yield* update(principal, network, file.id, {
          ...(change.name === undefined ? {} : { name: change.name }),
          ...(keyvalues === undefined ? {} : { keyvalues })
        }))
      }
      return updated
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
    const recordPin = Effect.fn("Files.recordPin")(function*(job: StoredFile & {
      readonly jobId: string
      readonly workspaceId: string
      readonly userId: string
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

    return { upload, uploadFolder, requireGroup, list, get, update, remove, isPublic, holds, legacyList, unpin, updateByCid, recordPin }
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
