/**
 * What a CID's history leaves known: who uploaded it first and when, the live files of it (with the workspace
 * holding each), and its signature. It has no phases, so it is one record rather than a union.
 */
import { Option } from "effect"
import type { SignatureAdded } from "./Events.ts"

export interface CidState {
  readonly firstUpload: Option.Option<{ readonly workspaceId: string; readonly at: string }>
  /** The workspace holding each live file of this CID, by file id. */
  readonly liveFiles: ReadonlyMap<string, string>
  readonly signature: Option.Option<SignatureAdded>
}

export const initial: CidState = { firstUpload: Option.none(), liveFiles: new Map(), signature: Option.none() }

/** Whether `workspaceId` holds a live file of this CID. */
export const holds = (state: CidState, workspaceId: string): boolean =>
  [...state.liveFiles.values()].includes(workspaceId)
