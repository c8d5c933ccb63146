/** What can be asked of an agent's snapshot history. Time, limits and the store's answers come inside commands. */
import { Schema } from "effect"
import { ChangeSummary, ExpiryReason, Trigger } from "./Events.ts"

/** A tree the store holds now: recorded as the next snapshot unless it repeats the latest (pre-reset ones always). */
export class RecordSnapshot extends Schema.TaggedClass<RecordSnapshot>()("RecordSnapshot", {
  agentId: Schema.String,
  workspaceId: Schema.String,
  snapshotCid: Schema.String,
  trigger: Trigger,
  changeSummary: ChangeSummary,
  files: Schema.Number,
  bytes: Schema.Number,
  /** Retention: the newest this many are kept, and every pre-reset snapshot; older ones expire. */
  keep: Schema.Number,
  at: Schema.String
}) {}

/** Every kept snapshot expires (the agent was deleted and its grace period is over). */
export class ExpireAll extends Schema.TaggedClass<ExpireAll>()("ExpireAll", {
  agentId: Schema.String,
  reason: ExpiryReason,
  at: Schema.String
}) {}

export class RecordReset extends Schema.TaggedClass<RecordReset>()("RecordReset", {
  agentId: Schema.String,
  workspaceId: Schema.String,
  snapshotCid: Schema.String,
  preResetCid: Schema.String,
  at: Schema.String
}) {}

export class RecordResetFailure extends Schema.TaggedClass<RecordResetFailure>()("RecordResetFailure", {
  agentId: Schema.String,
  workspaceId: Schema.String,
  snapshotCid: Schema.String,
  preResetCid: Schema.optionalKey(Schema.String),
  reason: Schema.String,
  at: Schema.String
}) {}

/** Records a fork from one of the agent's snapshots; only from one still kept. */
export class RecordFork extends Schema.TaggedClass<RecordFork>()("RecordFork", {
  agentId: Schema.String,
  snapshotCid: Schema.String,
  forkAgentId: Schema.String,
  at: Schema.String
}) {}

export const SnapshotCommand = Schema.Union([RecordSnapshot, ExpireAll, RecordReset, RecordResetFailure, RecordFork])
export type SnapshotCommand = typeof SnapshotCommand.Type
