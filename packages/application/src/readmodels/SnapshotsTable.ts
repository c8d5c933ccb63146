/**
 * `cairn_snapshots`: one row per kept snapshot of each agent (expired ones are deleted), and
 * `cairn_snapshot_agents`: when an agent whose snapshots outlive it was deleted. The list endpoint, the status
 * endpoint, garbage collection (every kept CID is a live root) and the deleted agents' grace period read them.
 */
import { Agent, Snapshot } from "@cairn/domain"
import { Effect, Schema } from "effect"
import type { SqlClient } from "effect/sql"
import * as ReadModel from "./ReadModel.ts"

export const projection = ReadModel.make({
  name: "snapshots",
  events: Schema.Union([Snapshot.SnapshotEvent, Agent.AgentEvent]),
  tables: ["cairn_snapshots", "cairn_snapshot_agents"],
  setup: (sql) =>
    Effect.all([
      sql`CREATE TABLE IF NOT EXISTS cairn_snapshots (
        agent_id text NOT NULL, sequence int NOT NULL, workspace_id text NOT NULL, cid text NOT NULL, trigger text NOT NULL,
        change_summary text NOT NULL, files int NOT NULL, bytes bigint NOT NULL, created_at timestamptz NOT NULL,
        PRIMARY KEY (agent_id, sequence))`,
      sql`CREATE INDEX IF NOT EXISTS cairn_snapshots_cid ON cairn_snapshots (cid)`,
      sql`CREATE TABLE IF NOT EXISTS cairn_snapshot_agents (agent_id text PRIMARY KEY, deleted_at timestamptz NOT NULL)`
    ]),
  on: {
    SnapshotTaken: (sql, e) =>
      sql`INSERT INTO cairn_snapshots (agent_id, sequence, workspace_id, cid, trigger, change_summary, files, bytes, created_at)
        VALUES (${e.agentId}, ${e.sequence}, ${e.workspaceId}, ${e.snapshotCid}, ${e.trigger}, ${JSON.stringify(e.changeSummary)},
          ${e.files}, ${e.bytes}, ${e.at}) ON CONFLICT DO NOTHING`,
    SnapshotsExpired: (sql, e) =>
      Effect.forEach(e.sequences, (sequence) => sql`DELETE FROM cairn_snapshots WHERE agent_id = ${e.agentId} AND sequence = ${sequence}`, { discard: true }),
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
