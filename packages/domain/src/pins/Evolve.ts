/** Folds one pin job event into the job's state. */
import { Match } from "effect"
import type { PinJobEvent } from "./Events.ts"
import type { PinJobState } from "./State.ts"

export const evolve = (state: PinJobState, event: PinJobEvent): PinJobState =>
  Match.valueTags(event, {
    PinJobQueued: (queued): PinJobState => ({ _tag: "Job", queued, status: "prechecking", ...(queued.node === undefined ? {} : { node: queued.node }) }),
    PinJobRetrieving: (e): PinJobState =>
      state._tag === "Job" ? { ...state, status: "retrieving", ...(e.node === undefined ? {} : { node: e.node }) } : state,
    PinJobPinned: (e): PinJobState => state._tag === "Job" ? { ...state, status: "pinned", fileId: e.fileId } : state,
    PinJobFailed: (e): PinJobState => state._tag === "Job" ? { ...state, status: "failed", reason: e.reason } : state,
    PinJobCancelled: (): PinJobState => state._tag === "Job" ? { ...state, status: "cancelled" } : state
  })
