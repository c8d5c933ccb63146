/**
 * How snapshots behave in this deployment. The runtime sets them from the environment (SNAPSHOTS, SNAPSHOT_INTERVAL,
 * SNAPSHOT_RETENTION, SNAPSHOT_EXCLUDE, SNAPSHOT_DELETED_GRACE; docs/operations.md, "Snapshots"); these defaults
 * apply otherwise.
 */
import { Snapshot } from "@cairn/domain"
import { Context } from "effect"

export interface SnapshotSettingValues {
  /** Off: every snapshot endpoint answers `Storage not configured`, and nothing is taken automatically. */
  readonly enabled: boolean
  /** How often running agents are snapshotted when their workspace changed; 0 turns automatic snapshots off. */
  readonly intervalMs: number
  /** How many of an agent's newest snapshots are kept (every pre-reset one is kept besides). */
  readonly keep: number
  /** Paths left out of snapshots and left alone by resets (Snapshot.matcher's globs). */
  readonly exclude: ReadonlyArray<string>
  /** How long a deleted agent's snapshots are kept before they are removed. */
  readonly deletedGraceMs: number
}

export const defaultSnapshotSettings: SnapshotSettingValues = {
  enabled: true,
  intervalMs: 60_000,
  keep: 50,
  exclude: Snapshot.defaultExclusions,
  deletedGraceMs: 7 * 24 * 60 * 60 * 1000
}

export const SnapshotSettings = Context.Reference<SnapshotSettingValues>("cairn/SnapshotSettings", {
  defaultValue: () => defaultSnapshotSettings
})
