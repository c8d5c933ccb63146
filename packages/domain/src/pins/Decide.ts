/** Decides a pin job command: queued once; progress only while open; cancelled by its own workspace while open. */
import { Match, Result } from "effect"
import type { PinJobCommand } from "./Commands.ts"
import { PinJobExists, PinJobFinished, PinJobNotFound, type PinJobError, PinJobTaken } from "./Errors.ts"
import { PinJobCancelled, type PinJobEvent, PinJobFailed, PinJobPinned, PinJobQueued, PinJobRetrieving } from "./Events.ts"
import { isOpen, type PinJobState } from "./State.ts"

export type Decision = Result.Result<ReadonlyArray<PinJobEvent>, PinJobError>

const open = (state: PinJobState, jobId: string, make: () => PinJobEvent): Decision => {
  if (state._tag === "NoJob") return Result.fail(new PinJobNotFound({ jobId }))
  if (!isOpen(state.status)) return Result.fail(new PinJobFinished({ jobId, current: state.status }))
  return Result.succeed([make()])
}

export const decide = (command: PinJobCommand, state: PinJobState): Decision =>
  Match.valueTags(command, {
    QueuePin: ({ _tag, ...fields }): Decision =>
      state._tag === "NoJob" ? Result.succeed([new PinJobQueued(fields)]) : Result.fail(new PinJobExists({ jobId: fields.jobId })),
    StartRetrieving: ({ _tag, takeFrom, ...fields }): Decision => {
      if (state._tag === "Job" && isOpen(state.status) && state.node !== undefined && state.node !== fields.node) {
        // One node works on a job: another takes it only from the node named, whose lease it found expired.
        return takeFrom === state.node ? Result.succeed([new PinJobRetrieving(fields)]) : Result.fail(new PinJobTaken({ jobId: fields.jobId, node: state.node }))
      }
      // A job its own node resumes after a restart is retrieving already: recorded once.
      return state._tag === "Job" && state.status === "retrieving" && state.node === fields.node
        ? Result.succeed([])
        : open(state, fields.jobId, () => new PinJobRetrieving(fields))
    },
    MarkPinned: ({ _tag, ...fields }): Decision => open(state, fields.jobId, () => new PinJobPinned(fields)),
    MarkFailed: ({ _tag, ...fields }): Decision => open(state, fields.jobId, () => new PinJobFailed(fields)),
    CancelPin: ({ _tag, workspaceId, evenIfFinished, ...fields }): Decision => {
      if (state._tag === "NoJob" || state.queued.workspaceId !== workspaceId) return Result.fail(new PinJobNotFound({ jobId: fields.jobId }))
      if (evenIfFinished === true && state.status !== "cancelled") return Result.succeed([new PinJobCancelled(fields)])
      return open(state, fields.jobId, () => new PinJobCancelled(fields))
    }
  })
