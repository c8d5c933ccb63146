/**
 * What happens to an agent's workspace snapshots (stream `snapshots-<agentId>`): one is taken, old ones expire
 * (retention, or the agent was deleted long enough ago), the workspace is reset to one, or a reset fails. A snapshot
 * is named by its sequence number in the agent's history (one CID can appear twice: a workspace reset to an old
 * state and snapshotted again). Stored: the schema only ever grows optional fields.
 */
import { Schema } from "effect"

export const Trigger = Schema.Literals(["manual", "auto", "pre-reset", "sleep"])
export type Trigger = typeof Trigger.Type

/** How a snapshot differs from the one before it: files and symlinks added, changed and gone; new content's bytes. */
export const ChangeSummary = Schema.Struct({
  added: Schema.Number,
  modified: Schema.Number,
  deleted: Schema.Number,
  bytesAdded: Schema.Number
})
export type ChangeSummary = typeof ChangeSummary.Type

export class SnapshotTaken extends Schema.TaggedClass<SnapshotTaken>()("SnapshotTaken", {
  agentId: Schema.String,
  workspaceId: Schema.String,
  sequence: Schema.Number,
  snapshotCid: Schema.String,
  trigger: Trigger,
  changeSummary: ChangeSummary,
  /** Files (and symlinks) in the snapshot, and their bytes. */
  files: Schema.Number,
  bytes: Schema.Number,
  at: Schema.String
}) {}

export const ExpiryReason = Schema.Literals(["retention", "agent-deleted"])
export type ExpiryReason = typeof ExpiryReason.Type

/** The snapshots are no longer listed nor kept: their blocks go at the next garbage collection unless shared. */
export class SnapshotsExpired extends Schema.TaggedClass<SnapshotsExpired>()("SnapshotsExpired", {
  agentId: Schema.String,
  sequences: Schema.Array(Schema.Number),
  reason: ExpiryReason,
  at: Schema.String
}) {}

export class WorkspaceReset extends Schema.TaggedClass<WorkspaceReset>()("WorkspaceReset", {
  agentId: Schema.String,
  workspaceId: Schema.String,
  snapshotCid: Schema.String,
  /** The snapshot taken just before, to undo the reset with. */
  preResetCid: Schema.String,
  at: Schema.String
}) {}

export class WorkspaceResetFailed extends Schema.TaggedClass<WorkspaceResetFailed>()("WorkspaceResetFailed", {
  agentId: Schema.String,
  workspaceId: Schema.String,
  snapshotCid: Schema.String,
  /** Absent when the reset failed before its pre-reset snapshot was taken (the workspace was not touched). */
  preResetCid: Schema.optionalKey(Schema.String),
  /** What went wrong, for operators: never file contents. */
  reason: Schema.String,
  at: Schema.String
}) {}

/** A new agent was made from one of this agent's snapshots (its `AgentCreated.fromSnapshot` names this one). */
export class SnapshotForked extends Schema.TaggedClass<SnapshotForked>()("SnapshotForked", {
  agentId: Schema.String,
  snapshotCid: Schema.String,
  /** The agent made from it. */
  forkAgentId: Schema.String,
  at: Schema.String
}) {}

export const SnapshotEvent = Schema.Union([SnapshotTaken, SnapshotsExpired, WorkspaceReset, WorkspaceResetFailed, SnapshotForked])
export type SnapshotEvent = typeof SnapshotEvent.Type
