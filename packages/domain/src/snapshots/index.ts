/**
 * Workspace snapshots: an agent's workspace stored as one UnixFS directory CID, taken on demand, automatically and
 * before every reset; the history of them (stream `snapshots-<agentId>`), retention, what a reset may name, and
 * which paths are left out. The trees themselves live in the SnapshotStore; the workspace in the engine.
 */
import type { Decider } from "../Decider.ts"
import type { SnapshotCommand } from "./Commands.ts"
import { decide } from "./Decide.ts"
import type { SnapshotError } from "./Errors.ts"
import { SnapshotEvent } from "./Events.ts"
import { evolve } from "./Evolve.ts"
import { initial, type SnapshotsState } from "./State.ts"

export * from "./ChangeSummary.ts"
export * from "./Commands.ts"
export { decide, type Decision } from "./Decide.ts"
export * from "./Errors.ts"
export * from "./Events.ts"
export { evolve } from "./Evolve.ts"
export * from "./Exclusions.ts"
export * from "./Input.ts"
export * from "./Retention.ts"
export * from "./State.ts"

export const stream = (agentId: string) => `snapshots-${agentId}`

export const decider: Decider<SnapshotCommand, SnapshotEvent, SnapshotsState, SnapshotError> = { initial, decide, evolve, events: SnapshotEvent }
