/** Folds one file event into the file's state; changes to a file that is not stored change nothing. */
import { Match } from "effect"
import { type FileEvent, FileUploaded } from "./Events.ts"
import type { FileState } from "./State.ts"

export const evolve = (state: FileState, event: FileEvent): FileState =>
  Match.valueTags(event, {
    FileUploaded: (file): FileState => ({ _tag: "Stored", file }),
    FileUpdated: (change): FileState =>
      state._tag === "Stored"
        ? {
          _tag: "Stored",
          file: new FileUploaded({
            ...state.file,
            name: change.name ?? state.file.name,
            keyvalues: change.keyvalues ?? state.file.keyvalues
          })
        }
        : state,
    FileAddedToGroup: ({ groupId }): FileState =>
      state._tag === "Stored" ? { _tag: "Stored", file: new FileUploaded({ ...state.file, groupId }) } : state,
    FileRemovedFromGroup: (): FileState =>
      state._tag === "Stored" ? { _tag: "Stored", file: new FileUploaded({ ...state.file, groupId: null }) } : state,
    FileDeleted: (): FileState => (state._tag === "Stored" ? { _tag: "Deleted", file: state.file } : state)
  })
