/**
 * `cairn_snapshots`: one row per kept snapshot of each agent (expired ones are deleted); `cairn_snapshot_streams`:
 * per agent, how many events its snapshot stream holds, the next sequence number and the last sync; and
 * `cairn_snapshot_agents`: when an agent whose snapshots outlive it was deleted. The list endpoint, the status
 * endpoint, garbage collection (every kept CID is a live root) and the deleted agents' grace period read them, and
 * so does every snapshot command: an automatic snapshot a minute makes a long stream, so commands decide on this
 * state and its event count instead of folding the stream (a stale count only makes the append conflict, and the
 * command handler then folds the stream).
 */
import { Agent, Snapshot } from "@cairn/domain"
import { Effect, Schema } from "effect"
import type { SqlClient } from "effect/sql"
import * as ReadModel from "./ReadModel.ts"

/** One more event on the agent's snapshot stream; a snapshot also moves the next sequence and the last sync. */
const counted = (sql: SqlClient.SqlClient, agentId: string, taken?: { readonly nextSequence: number; readonly lastSync: string }) =>
  taken === undefined
    ? sql`INSERT INTO cairn_snapshot_streams (agent_id, events, next_sequence, last_sync) VALUES (${agentId}, 1, 1, NULL)
        ON CONFLICT (agent_id) DO UPDATE SET events = cairn_snapshot_streams.events + 1`
    : sql`INSERT INTO cairn_snapshot_streams (agent_id, events, next_sequence, last_sync) VALUES (${agentId}, 1, ${taken.nextSequence}, ${taken.lastSync})
        ON CONFLICT (agent_id) DO UPDATE SET events = cairn_snapshot_streams.events + 1, next_sequence = ${taken.nextSequence},
          last_sync = ${taken.lastSync}`

export const projection = ReadModel.make({
  name: "snapshots",
  events: Schema.Union([Snapshot.SnapshotEvent, Agent.AgentEvent]),
  tables: ["cairn_snapshots", "cairn_snapshot_streams", "cairn_snapshot_agents"],
  setup: (sql) =>
    Effect.all([
      sql`CREATE TABLE IF NOT EXISTS cairn_snapshots (
        agent_id text NOT NULL, sequence int NOT NULL, workspace_id text NOT NULL, cid text NOT NULL, trigger text NOT NULL,
        change_summary text NOT NULL, files int NOT NULL, bytes bigint NOT NULL, created_at timestamptz NOT NULL,
        PRIMARY KEY (agent_id, sequence))`,
      sql`CREATE INDEX IF NOT EXISTS cairn_snapshots_cid ON cairn_snapshots (cid)`,
      sql`CREATE TABLE IF NOT EXISTS cairn_snapshot_streams (
        agent_id text PRIMARY KEY, events int NOT NULL, next_sequence int NOT NULL, last_sync timestamptz)`,
      sql`CREATE TABLE IF NOT EXISTS cairn_snapshot_agents (agent_id text PRIMARY KEY, deleted_at timestamptz NOT NULL)`
    ]),
  on: {
    SnapshotTaken: (sql, e) =>
      Effect.all([
        sql`INSERT INTO cairn_snapshots (agent_id, sequence, workspace_id, cid, trigger, change_summary, files, bytes, created_at)
          VALUES (${e.agentId}, ${e.sequence}, ${e.workspaceId}, ${e.snapshotCid}, ${e.trigger}, ${JSON.stringify(e.changeSummary)},
            ${e.files}, ${e.bytes}, ${e.at}) ON CONFLICT DO NOTHING`,
        counted(sql, e.agentId, { nextSequence: e.sequence + 1, lastSync: e.at })
      ], { discard: true }),
    SnapshotsExpired: (sql, e) =>
      Effect.all([
        Effect.forEach(e.sequences, (sequence) => sql`DELETE FROM cairn_snapshots WHERE agent_id = ${e.agentId} AND sequence = ${sequence}`, { discard: true }),
        counted(sql, e.agentId)
      ], { discard: true }),
    WorkspaceReset: (sql, e) => counted(sql, e.agentId),
    WorkspaceResetFailed: (sql, e) => counted(sql, e.agentId),
    SnapshotForked: (sql, e) => counted(sql, e.agentId),
    AgentDeleted: (sql, e) =>
      sql`INSERT INTO cairn_snapshot_agents (agent_id, deleted_at) VALUES (${e.agentId}, ${e.at}) ON CONFLICT DO NOTHING`
  }
})

/** A snapshot as `GET /v0/agents/:agentId/snapshots` lists it. */
export interface SnapshotView {
  readonly snapshotCid: string
  readonly createdAt: string
  readonly trigger: Snapshot.Trigger
  readonly changeSummary: Snapshot.ChangeSummary
  readonly files: number
  readonly bytes: number
}

interface SnapshotRow {
  readonly sequence: number
  readonly cid: string
  readonly trigger: Snapshot.Trigger
  readonly change_summary: string
  readonly files: number
  readonly bytes: number | string
  readonly created_at: Date
}

const toView = (row: SnapshotRow): SnapshotView => ({
  snapshotCid: row.cid,
  createdAt: row.created_at.toISOString(),
  trigger: row.trigger,
  changeSummary: JSON.parse(row.change_summary),
  files: row.files,
  bytes: Number(row.bytes)
})

export interface Page {
  readonly snapshots: ReadonlyArray<SnapshotView>
  /** The cursor for the next (older) page, when there is one. */
  readonly nextCursor: string | undefined
}

/** The queries the services make of them. */
export const queries = (sql: SqlClient.SqlClient) => ({
  /** The agent's snapshot history as its stream would fold, and the stream's event count (its version). */
  history: (agentId: string) =>
    Effect.all([
      sql<{ readonly events: number; readonly next_sequence: number; readonly last_sync: Date | null }>`
        SELECT events, next_sequence, last_sync FROM cairn_snapshot_streams WHERE agent_id = ${agentId}`,
      sql<{ readonly sequence: number; readonly cid: string; readonly trigger: Snapshot.Trigger; readonly created_at: Date }>`
        SELECT sequence, cid, trigger, created_at FROM cairn_snapshots WHERE agent_id = ${agentId} ORDER BY sequence`
    ]).pipe(
      Effect.orDie,
      Effect.map(([[stream], kept]) => ({
        version: stream?.events ?? 0,
        state: {
          kept: kept.map((row) => ({ sequence: row.sequence, cid: row.cid, trigger: row.trigger, at: row.created_at.toISOString() })),
          nextSequence: stream?.next_sequence ?? 1,
          lastSync: stream?.last_sync?.toISOString()
        } satisfies Snapshot.SnapshotsState
      }))
    ),
  /** The agent's kept snapshots, newest first: `limit` of them, older than `before` (a sequence) when given. */
  page: (agentId: string, limit: number, before: number | undefined) =>
    sql<SnapshotRow>`SELECT sequence, cid, trigger, change_summary, files, bytes, created_at FROM cairn_snapshots
      WHERE agent_id = ${agentId} AND sequence < ${before ?? 2_147_483_647} ORDER BY sequence DESC LIMIT ${limit + 1}`.pipe(
      Effect.orDie,
      Effect.map((rows): Page => ({
        snapshots: rows.slice(0, limit).map(toView),
        nextCursor: rows.length > limit ? String(rows[limit - 1]!.sequence) : undefined
      }))
    ),
  /**
   * The agent of the workspace whose kept snapshots hold `cid` (the one that took it last, when several did: a
   * snapshot of unchanged content has one CID); a deleted agent's too, until its grace period ends.
   */
  holderIn: (workspaceId: string, cid: string) =>
    sql<{ readonly agent_id: string }>`SELECT agent_id FROM cairn_snapshots WHERE workspace_id = ${workspaceId} AND cid = ${cid}
      ORDER BY created_at DESC, agent_id LIMIT 1`.pipe(
      Effect.orDie,
      Effect.map((rows) => rows[0]?.agent_id)
    ),
  /** Every kept snapshot's CID, of every agent: what garbage collection must keep. */
  liveRoots: sql<{ readonly cid: string }>`SELECT DISTINCT cid FROM cairn_snapshots`.pipe(
    Effect.orDie,
    Effect.map((rows) => rows.map((row) => row.cid))
  ),
  /** Agents deleted before `cutoff` that still have kept snapshots. */
  deletedBefore: (cutoff: string) =>
    sql<{ readonly agent_id: string }>`SELECT a.agent_id FROM cairn_snapshot_agents a
      WHERE a.deleted_at < ${cutoff} AND EXISTS (SELECT 1 FROM cairn_snapshots s WHERE s.agent_id = a.agent_id)`.pipe(
      Effect.orDie,
      Effect.map((rows) => rows.map((row) => row.agent_id))
    )
})
