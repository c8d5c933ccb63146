/** An agent's snapshot history as its events leave it: the snapshots still kept, oldest first. */
import type { Trigger } from "./Events.ts"

export interface KeptSnapshot {
  readonly sequence: number
  readonly cid: string
  readonly trigger: Trigger
  readonly at: string
}

export interface SnapshotsState {
  readonly kept: ReadonlyArray<KeptSnapshot>
  /** The sequence number the next snapshot gets. */
  readonly nextSequence: number
  /** When the last snapshot was taken (expired or not). */
  readonly lastSync: string | undefined
}

export const initial: SnapshotsState = { kept: [], nextSequence: 1, lastSync: undefined }

/** The newest kept snapshot, if any. */
export const latest = (state: SnapshotsState): KeptSnapshot | undefined => state.kept.at(-1)

/** Whether `cid` is one of the agent's kept snapshots: only those can be reset to. */
export const holds = (state: SnapshotsState, cid: string) => state.kept.some((snapshot) => snapshot.cid === cid)
