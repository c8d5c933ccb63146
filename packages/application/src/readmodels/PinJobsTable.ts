/**
 * `cairn_pin_jobs`: one row per pin-by-CID job (and Pinning Service API pin), with its status as its events leave it,
 * for the jobs lists, a job by id, and the open jobs a worker resumes at startup.
 */
import { PinJob } from "@cairn/domain"
import type { File, Network } from "@cairn/domain"
import { Effect, Option } from "effect"
import type { SqlClient } from "effect/sql"
import * as ReadModel from "./ReadModel.ts"

export const projection = ReadModel.make({
  name: "pin-jobs",
  events: PinJob.PinJobEvent,
  tables: ["cairn_pin_jobs"],
  setup: (sql) =>
    Effect.all([
      sql`CREATE TABLE IF NOT EXISTS cairn_pin_jobs (
        id text PRIMARY KEY, workspace_id text NOT NULL, user_id text NOT NULL, network text NOT NULL, cid text NOT NULL,
        name text NOT NULL, group_id text, keyvalues jsonb NOT NULL, host_nodes jsonb NOT NULL, meta jsonb,
        psa boolean NOT NULL, status text NOT NULL, reason text, file_id text, size bigint,
        queued_at timestamptz NOT NULL, updated_at timestamptz NOT NULL)`,
      sql`ALTER TABLE cairn_pin_jobs ADD COLUMN IF NOT EXISTS node_id text`,
      sql`CREATE INDEX IF NOT EXISTS cairn_pin_jobs_listing ON cairn_pin_jobs (workspace_id, network, queued_at, id)`,
      sql`CREATE INDEX IF NOT EXISTS cairn_pin_jobs_open ON cairn_pin_jobs (status) WHERE status IN ('prechecking', 'retrieving')`
    ]),
  on: {
    PinJobQueued: (sql, e) =>
      sql`INSERT INTO cairn_pin_jobs (id, workspace_id, user_id, network, cid, name, group_id, keyvalues, host_nodes, meta, psa,
          status, node_id, queued_at, updated_at)
        VALUES (${e.jobId}, ${e.workspaceId}, ${e.userId}, ${e.network}, ${e.cid}, ${e.name}, ${e.groupId},
          ${JSON.stringify(e.keyvalues)}::jsonb, ${JSON.stringify(e.hostNodes)}::jsonb,
          ${e.meta === undefined ? null : JSON.stringify(e.meta)}::jsonb, ${e.psa ?? false}, 'prechecking', ${e.node ?? null}, ${e.at}, ${e.at})
        ON CONFLICT (id) DO NOTHING`,
    PinJobRetrieving: (sql, e) =>
      sql`UPDATE cairn_pin_jobs SET status = 'retrieving', node_id = COALESCE(${e.node ?? null}, node_id), updated_at = ${e.at} WHERE id = ${e.jobId}`,
    PinJobPinned: (sql, e) =>
      sql`UPDATE cairn_pin_jobs SET status = 'pinned', file_id = ${e.fileId}, size = ${e.size}, updated_at = ${e.at} WHERE id = ${e.jobId}`,
    PinJobFailed: (sql, e) =>
      sql`UPDATE cairn_pin_jobs SET status = 'failed', reason = ${e.reason}, updated_at = ${e.at} WHERE id = ${e.jobId}`,
    PinJobCancelled: (sql, e) => sql`UPDATE cairn_pin_jobs SET status = 'cancelled', updated_at = ${e.at} WHERE id = ${e.jobId}`
  }
})

/** A pin job as the APIs show it. */
export interface PinJobView {
  readonly id: string
  readonly workspaceId: string
  readonly userId: string
  readonly network: Network
  readonly cid: string
  readonly name: string
  readonly groupId: string | null
  readonly keyvalues: File.KeyValues
  readonly hostNodes: ReadonlyArray<string>
  readonly meta: File.KeyValues | null
  readonly psa: boolean
  readonly status: PinJob.PinJobStatus
  /** The node whose worker has it (null on jobs recorded before nodes were). */
  readonly node: string | null
  readonly reason: string | null
  readonly fileId: string | null
  readonly size: number | null
  readonly queuedAt: string
  readonly updatedAt: string
}

interface Row {
  readonly id: string
  readonly workspace_id: string
  readonly user_id: string
  readonly network: Network
  readonly cid: string
  readonly name: string
  readonly group_id: string | null
  readonly keyvalues: File.KeyValues | string
  readonly host_nodes: ReadonlyArray<string> | string
  readonly meta: File.KeyValues | string | null
  readonly psa: boolean
  readonly status: PinJob.PinJobStatus
  readonly node_id: string | null
  readonly reason: string | null
  readonly file_id: string | null
  readonly size: string | number | null
  readonly queued_at: Date
  readonly updated_at: Date
}

// PGlite and Postgres both parse jsonb; a driver that hands back text is read as JSON too.
const parsed = <A>(value: A | string): A => typeof value === "string" ? JSON.parse(value) as A : value

const toView = (row: Row): PinJobView => ({
  id: row.id,
  workspaceId: row.workspace_id,
  userId: row.user_id,
  network: row.network,
  cid: row.cid,
  name: row.name,
  groupId: row.group_id,
  keyvalues: parsed(row.keyvalues),
  hostNodes: parsed(row.host_nodes),
  meta: row.meta === null ? null : parsed(row.meta),
  psa: row.psa,
  status: row.status,
  node: row.node_id,
  reason: row.reason,
  fileId: row.file_id,
  size: row.size === null ? null : Number(row.size),
  queuedAt: row.queued_at.toISOString(),
  updatedAt: row.updated_at.toISOString()
})

const columns = "id, workspace_id, user_id, network, cid, name, group_id, keyvalues, host_nodes, meta, psa, status, node_id, reason, file_id, size, queued_at, updated_at"

/** The queries the services make of it. */
export const queries = (sql: SqlClient.SqlClient) => ({
  /** One job of the workspace's. */
  byId: (workspaceId: string, jobId: string) =>
    sql<Row>`SELECT ${sql.literal(columns)} FROM cairn_pin_jobs WHERE id = ${jobId} AND workspace_id = ${workspaceId}`.pipe(
      Effect.orDie,
      Effect.map((rows) => Option.map(Option.fromNullishOr(rows[0]), toView))
    ),
  /** The workspace's jobs (made through `/v3` or the Pinning Service API), newest first. */
  inWorkspace: (workspaceId: string, filter: { readonly network?: Network; readonly psa?: boolean }) =>
    sql<Row>`SELECT ${sql.literal(columns)} FROM cairn_pin_jobs WHERE workspace_id = ${workspaceId}
        ${filter.network === undefined ? sql`` : sql`AND network = ${filter.network}`}
        ${filter.psa === undefined ? sql`` : sql`AND psa = ${filter.psa}`}
        ORDER BY queued_at DESC, id DESC`.pipe(Effect.orDie, Effect.map((rows) => rows.map(toView))),
  /** The job, when it is still to be worked on (any workspace's: the worker's lookup). */
  openById: (jobId: string) =>
    sql<Row>`SELECT ${sql.literal(columns)} FROM cairn_pin_jobs WHERE id = ${jobId} AND status IN ('prechecking', 'retrieving')`.pipe(
      Effect.orDie,
      Effect.map((rows) => Option.map(Option.fromNullishOr(rows[0]), toView))
    ),
  /** The node's jobs still to be worked on (and those of no node), oldest first: what its worker resumes at startup. */
  openOf: (node: string) =>
    sql<Row>`SELECT ${sql.literal(columns)} FROM cairn_pin_jobs WHERE status IN ('prechecking', 'retrieving')
        AND (node_id = ${node} OR node_id IS NULL) ORDER BY queued_at, id`.pipe(Effect.orDie, Effect.map((rows) => rows.map(toView))),
  /** Other nodes' jobs still to be worked on, oldest first: those of a node whose lease expired are taken over. */
  openElsewhere: (node: string) =>
    sql<Row>`SELECT ${sql.literal(columns)} FROM cairn_pin_jobs WHERE status IN ('prechecking', 'retrieving')
        AND node_id <> ${node} ORDER BY queued_at, id`.pipe(Effect.orDie, Effect.map((rows) => rows.map(toView)))
})
