/**
 * How the snapshot endpoints refuse (service interface, section 7: `Storage not configured`, `Sync failed`,
 * `Invalid snapshot CID`, `Snapshot not found`; Pinata's `Reset failed`; 503 when the snapshot backend is out of
 * reach). The application maps the engine's and the store's failures onto these.
 */
import { Schema } from "effect"

/** Snapshots are turned off in this deployment's config (SNAPSHOTS=off). */
export class StorageNotConfigured extends Schema.TaggedError<StorageNotConfigured>()("StorageNotConfigured", {}) {
  readonly status = 400
  override readonly message = "Storage not configured"
}

/** The workspace could not be read or stored; nothing was recorded. */
export class SyncFailed extends Schema.TaggedError<SyncFailed>()("SyncFailed", { agentId: Schema.String }) {
  readonly status = 500
  override readonly message = "Sync failed"
}

/** The snapshot store (the embedded blockstore's disk, or Kubo) cannot be reached; nothing was recorded. */
export class SnapshotStorageUnavailable extends Schema.TaggedError<SnapshotStorageUnavailable>()("SnapshotStorageUnavailable", {
  operation: Schema.String
}) {
  readonly status = 503
  override readonly message = "Snapshot storage unavailable"
}

/** `snapshotCid` is missing, not a string, or not a CID. */
export class InvalidSnapshotCid extends Schema.TaggedError<InvalidSnapshotCid>()("InvalidSnapshotCid", {}) {
  readonly status = 400
  override readonly message = "Invalid snapshot CID"
}

/** A well-formed CID that is not among this agent's kept snapshots (another agent's included). */
export class SnapshotNotFound extends Schema.TaggedError<SnapshotNotFound>()("SnapshotNotFound", { snapshotCid: Schema.String }) {
  readonly status = 404
  override readonly message = "Snapshot not found"
}

/** The reset did not complete; the pre-reset snapshot (named beside `error` when taken) restores what was there. */
export class ResetFailed extends Schema.TaggedError<ResetFailed>()("ResetFailed", {
  agentId: Schema.String,
  preResetCid: Schema.optionalKey(Schema.String)
}) {
  readonly status = 500
  override readonly message = "Reset failed"
  get details() {
    return this.preResetCid === undefined ? {} : { preResetCid: this.preResetCid }
  }
}

export type SnapshotError = SnapshotNotFound
