/** Folds one snapshot-history event into the state. */
import { Match } from "effect"
import type { SnapshotEvent } from "./Events.ts"
import type { SnapshotsState } from "./State.ts"

export const evolve = (state: SnapshotsState, event: SnapshotEvent): SnapshotsState =>
  Match.valueTags(event, {
    SnapshotTaken: (taken): SnapshotsState => ({
      kept: [...state.kept, { sequence: taken.sequence, cid: taken.snapshotCid, trigger: taken.trigger, at: taken.at }],
      nextSequence: taken.sequence + 1,
      lastSync: taken.at
    }),
    SnapshotsExpired: ({ sequences }): SnapshotsState => {
      const gone = new Set(sequences)
      return { ...state, kept: state.kept.filter((snapshot) => !gone.has(snapshot.sequence)) }
    },
    WorkspaceReset: (): SnapshotsState => state,
    WorkspaceResetFailed: (): SnapshotsState => state,
    SnapshotForked: (): SnapshotsState => state
  })
