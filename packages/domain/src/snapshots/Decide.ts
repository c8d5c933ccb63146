/**
 * Decides a snapshot-history command. A snapshot that repeats the latest kept one is not recorded again (the
 * workspace did not change), except a pre-reset snapshot, which must stay in the history as the reset's undo.
 * Taking one applies retention in the same decision. A reset is recorded only to a snapshot still kept. Pure, total.
 */
import { Match, Result } from "effect"
import type { SnapshotCommand } from "./Commands.ts"
import { type SnapshotError, SnapshotNotFound } from "./Errors.ts"
import { type SnapshotEvent, SnapshotForked, SnapshotsExpired, SnapshotTaken, WorkspaceReset, WorkspaceResetFailed } from "./Events.ts"
import { expiring } from "./Retention.ts"
import { holds, latest, type SnapshotsState } from "./State.ts"

export type Decision = Result.Result<ReadonlyArray<SnapshotEvent>, SnapshotError>

export const decide = (command: SnapshotCommand, state: SnapshotsState): Decision =>
  Match.valueTags(command, {
    RecordSnapshot: ({ _tag, keep, ...fields }): Decision => {
      if (fields.trigger !== "pre-reset" && latest(state)?.cid === fields.snapshotCid) return Result.succeed([])
      const taken = new SnapshotTaken({ ...fields, sequence: state.nextSequence })
      const expired = expiring([...state.kept, { sequence: taken.sequence, cid: taken.snapshotCid, trigger: taken.trigger, at: taken.at }], keep)
      return Result.succeed(expired.length === 0 ? [taken] : [
        taken,
        new SnapshotsExpired({ agentId: fields.agentId, sequences: expired.map((s) => s.sequence), reason: "retention", at: fields.at })
      ])
    },
    ExpireAll: ({ agentId, reason, at }): Decision =>
      Result.succeed(state.kept.length === 0 ? [] : [
        new SnapshotsExpired({ agentId, sequences: state.kept.map((s) => s.sequence), reason, at })
      ]),
    RecordReset: ({ _tag, ...fields }): Decision =>
      holds(state, fields.snapshotCid)
        ? Result.succeed([new WorkspaceReset(fields)])
        : Result.fail(new SnapshotNotFound({ snapshotCid: fields.snapshotCid })),
    RecordResetFailure: ({ _tag, ...fields }): Decision => Result.succeed([new WorkspaceResetFailed(fields)]),
    RecordFork: ({ _tag, ...fields }): Decision =>
      holds(state, fields.snapshotCid)
        ? Result.succeed([new SnapshotForked(fields)])
        : Result.fail(new SnapshotNotFound({ snapshotCid: fields.snapshotCid }))
  })
