/**
 * A file: content on one network, owned by one workspace, with a name, key-values and an optional group.
 * Stream `file-<id>`. A file of another workspace, or looked up on the other network, is simply not found.
 */
import { Result, Schema } from "effect"
import { Network } from "../Network.ts"

export const KeyValues = Schema.Record(Schema.String, Schema.String)
export type KeyValues = typeof KeyValues.Type

export class FileUploaded extends Schema.TaggedClass<FileUploaded>()("FileUploaded", {
  fileId: Schema.String,
  workspaceId: Schema.String,
  userId: Schema.String,
  network: Network,
  cid: Schema.String,
  name: Schema.String,
  size: Schema.Number,
  mimeType: Schema.String,
  groupId: Schema.NullOr(Schema.String),
  keyvalues: KeyValues,
  numberOfFiles: Schema.Int,
  at: Schema.String
}) {}

export class FileUpdated extends Schema.TaggedClass<FileUpdated>()("FileUpdated", {
  fileId: Schema.String,
  name: Schema.optional(Schema.String),
  keyvalues: Schema.optional(KeyValues),
  at: Schema.String
}) {}

export class FileDeleted extends Schema.TaggedClass<FileDeleted>()("FileDeleted", {
  fileId: Schema.String,
  at: Schema.String
}) {}

export const FileEvent = Schema.Union([FileUploaded, FileUpdated, FileDeleted])
export type FileEvent = typeof FileEvent.Type

export class FileNotFound extends Schema.TaggedError<FileNotFound>()("FileNotFound", { fileId: Schema.String }) {
  readonly status = 404
  override get message() {
    return "File not found"
  }
}

export type FileState =
  | { readonly _tag: "NoFile" }
  | { readonly _tag: "Stored"; readonly file: FileUploaded }
  | { readonly _tag: "Deleted"; readonly file: FileUploaded }

export const initial: FileState = { _tag: "NoFile" }

export const evolve = (state: FileState, event: FileEvent): FileState => {
  switch (event._tag) {
    case "FileUploaded":
      return { _tag: "Stored", file: event }
    case "FileUpdated":
      return state._tag === "Stored"
        ? {
          _tag: "Stored",
          file: new FileUploaded({
            ...state.file,
            name: event.name ?? state.file.name,
            keyvalues: event.keyvalues ?? state.file.keyvalues
          })
        }
        : state
    case "FileDeleted":
      return state._tag === "Stored" ? { _tag: "Deleted", file: state.file } : state
  }
}

export const stream = (fileId: string) => `file-${fileId}`

/** Who asks, and on which network: a file is only ever visible to its workspace, on its network. */
export interface Caller {
  readonly workspaceId: string
  readonly network: Network
}

const visibleTo = (state: FileState, caller: Caller): state is Extract<FileState, { _tag: "Stored" }> =>
  state._tag === "Stored" && state.file.workspaceId === caller.workspaceId && state.file.network === caller.network

export const update = (
  state: FileState,
  caller: Caller,
  change: { readonly fileId: string; readonly name?: string; readonly keyvalues?: KeyValues; readonly at: string }
): Result.Result<ReadonlyArray<FileEvent>, FileNotFound> =>
  visibleTo(state, caller)
    ? Result.succeed([new FileUpdated(change)])
    : Result.fail(new FileNotFound({ fileId: change.fileId }))

export const remove = (
  state: FileState,
  caller: Caller,
  fileId: string,
  at: string
): Result.Result<{ readonly events: ReadonlyArray<FileEvent>; readonly file: FileUploaded }, FileNotFound> =>
  visibleTo(state, caller)
    ? Result.succeed({ events: [new FileDeleted({ fileId, at })], file: state.file })
    : Result.fail(new FileNotFound({ fileId }))
