/** Decides a file command: a file is uploaded once, and only its workspace, on its network, may change it. Pure and total. */
import { Match, Result } from "effect"
import type { Network } from "../Network.ts"
import type { FileCommand } from "./Commands.ts"
import { FileAlreadyExists, type FileError, FileNotFound } from "./Errors.ts"
import { FileAddedToGroup, FileDeleted, type FileEvent, FileRemovedFromGroup, FileUpdated, FileUploaded } from "./Events.ts"
import type { FileState } from "./State.ts"

export type Decision = Result.Result<ReadonlyArray<FileEvent>, FileError>

/**
 * The file as this workspace sees it on this network; another workspace's file, the other network's, or a
 * deleted one is not found. The service uses it too, to learn a file's CID before deleting it.
 */
export const visible = (state: FileState, fileId: string, workspaceId: string, network: Network): Result.Result<FileUploaded, FileNotFound> =>
  state._tag === "Stored" && state.file.workspaceId === workspaceId && state.file.network === network
    ? Result.succeed(state.file)
    : Result.fail(new FileNotFound({ fileId }))

export const decide = (command: FileCommand, state: FileState): Decision =>
  Match.valueTags(command, {
    UploadFile: ({ _tag, ...fields }): Decision =>
      state._tag === "NoFile"
        ? Result.succeed([new FileUploaded(fields)])
        : Result.fail(new FileAlreadyExists({ fileId: fields.fileId })),
    UpdateFile: ({ _tag, workspaceId, network, ...change }) =>
      Result.map(visible(state, change.fileId, workspaceId, network), (): ReadonlyArray<FileEvent> => [new FileUpdated(change)]),
    AddFileToGroup: ({ fileId, workspaceId, network, groupId, at }) =>
      Result.map(visible(state, fileId, workspaceId, network), (file): ReadonlyArray<FileEvent> =>
        file.groupId === groupId ? [] : [new FileAddedToGroup({ fileId, groupId, at })]),
    RemoveFileFromGroup: ({ fileId, workspaceId, network, groupId, at }) =>
      Result.map(visible(state, fileId, workspaceId, network), (file): ReadonlyArray<FileEvent> =>
        file.groupId === groupId ? [new FileRemovedFromGroup({ fileId, groupId, at })] : []),
    DeleteFile: ({ fileId, workspaceId, network, at }) =>
      Result.map(visible(state, fileId, workspaceId, network), (): ReadonlyArray<FileEvent> => [new FileDeleted({ fileId, at })])
  })
