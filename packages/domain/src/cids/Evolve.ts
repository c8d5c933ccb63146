/** Folds one CID event into what is known of the CID; the first upload, once known, never changes. */
import { Match, Option } from "effect"
import type { CidEvent } from "./Events.ts"
import type { CidState } from "./State.ts"

const without = (files: ReadonlyMap<string, string>, fileId: string) => {
  const next = new Map(files)
  next.delete(fileId)
  return next
}

export const evolve = (state: CidState, event: CidEvent): CidState =>
  Match.valueTags(event, {
    CidUploaded: ({ workspaceId, fileId, at }): CidState => ({
      ...state,
      firstUpload: Option.orElse(state.firstUpload, () => Option.some({ workspaceId, at })),
      liveFiles: new Map([...state.liveFiles, [fileId, workspaceId]])
    }),
    CidReleased: ({ fileId }): CidState => ({ ...state, liveFiles: without(state.liveFiles, fileId) }),
    SignatureAdded: (signature): CidState => ({ ...state, signature: Option.some(signature) }),
    SignatureRemoved: (): CidState => ({ ...state, signature: Option.none() })
  })
