/**
 * `cairn_files`: one row per live file (a delete removes it), for listing with filters and keyset pagination,
 * reading one file, and telling the gateway whether a CID is public. A file's `group_id` is the group it last
 * joined while that group is live; a group deleted since counts as none.
 *
 * `cairn_file_groups` (the live groups' ids, kept here so this read model stands on its own in a rebuild) is what
 * makes that hold when a join and the group's delete race. The store's guard on the group's stream is a read (a
 * join appends nothing there), so on PostgreSQL a join can commit after the delete it did not see. Here, a join or
 * an upload takes its group's row for share, and a delete removes the row (waiting for those joins to commit) before
 * it lets go of the group's files in a statement of its own, which then sees them: whichever commits first, no file
 * is left in a deleted group, and a join that comes after the delete leaves the file in none.
 */
import { File, Group, type Network } from "@cairn/domain"
import { Effect, Option, Schema } from "effect"
import type { SqlClient } from "effect/sql"
import * as ReadModel from "./ReadModel.ts"

/** The group, if it is live, its row held for share until the transaction ends; null otherwise. */
const liveGroup = (sql: SqlClient.SqlClient, groupId: string | null) =>
  groupId === null ? sql`NULL` : sql`(SELECT id FROM cairn_file_groups WHERE id = ${groupId} FOR SHARE)`

export const projection = ReadModel.make({
  name: "files",
  events: Schema.Union([File.FileEvent, Group.GroupEvent]),
  tables: ["cairn_files", "cairn_file_groups"],
  setup: (sql) =>
    Effect.all([
      sql`CREATE TABLE IF NOT EXISTS cairn_files (
        id text PRIMARY KEY, workspace_id text NOT NULL, user_id text NOT NULL, network text NOT NULL,
        cid text NOT NULL, name text NOT NULL, size bigint NOT NULL, mime_type text NOT NULL, group_id text,
        keyvalues jsonb NOT NULL, number_of_files int NOT NULL, created_at timestamptz NOT NULL)`,
      sql`CREATE INDEX IF NOT EXISTS cairn_files_listing ON cairn_files (workspace_id, network, created_at, id)`,
      sql`CREATE INDEX IF NOT EXISTS cairn_files_cid ON cairn_files (workspace_id, network, cid)`,
      sql`CREATE INDEX IF NOT EXISTS cairn_files_group ON cairn_files (group_id) WHERE group_id IS NOT NULL`,
      sql`CREATE TABLE IF NOT EXISTS cairn_file_groups (id text PRIMARY KEY)`
    ]).pipe(
      // Before groups, an upload's group_id was kept as given: one that names no live group is none, as a rebuild
      // from the log makes it.
      Effect.andThen(sql`UPDATE cairn_files SET group_id = NULL
        WHERE group_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM cairn_file_groups g WHERE g.id = cairn_files.group_id)`)
    ),
  on: {
    FileUploaded: (sql, e) =>
      sql`INSERT INTO cairn_files (id, workspace_id, user_id, network, cid, name, size, mime_type, group_id, keyvalues, number_of_files, created_at)
        VALUES (${e.fileId}, ${e.workspaceId}, ${e.userId}, ${e.network}, ${e.cid},
          ${e.name}, ${e.size}, ${e.mimeType}, ${liveGroup(sql, e.groupId)},
          ${JSON.stringify(e.keyvalues)}::jsonb, ${e.numberOfFiles}, ${e.at})
        ON CONFLICT (id) DO NOTHING`,
    FileUpdated: (sql, e) =>
      sql`UPDATE cairn_files SET
          name = coalesce(${e.name ?? null}, name),
          keyvalues = coalesce(${e.keyvalues === undefined ? null : JSON.stringify(e.keyvalues)}::jsonb, keyvalues)
        WHERE id = ${e.fileId}`,
    FileAddedToGroup: (sql, e) => sql`UPDATE cairn_files SET group_id = ${liveGroup(sql, e.groupId)} WHERE id = ${e.fileId}`,
    FileRemovedFromGroup: (sql, e) => sql`UPDATE cairn_files SET group_id = NULL WHERE id = ${e.fileId} AND group_id = ${e.groupId}`,
    FileDeleted: (sql, e) => sql`DELETE FROM cairn_files WHERE id = ${e.fileId}`,
    GroupCreated: (sql, e) => sql`INSERT INTO cairn_file_groups (id) VALUES (${e.groupId}) ON CONFLICT (id) DO NOTHING`,
    // Two statements: the second's snapshot is taken after the first has waited for the joins holding the row.
    GroupDeleted: (sql, e) =>
      sql`DELETE FROM cairn_file_groups WHERE id = ${e.groupId}`.pipe(
        Effect.andThen(sql`UPDATE cairn_files SET group_id = NULL WHERE group_id = ${e.groupId}`)
      )
  }
})

/** A file as the files API shows it. */
export interface FileView {
  readonly id: string
  readonly name: string
  readonly cid: string
  readonly size: number
  readonly numberOfFiles: number
  readonly mimeType: string
  readonly keyvalues: File.KeyValues
  readonly groupId: string | null
  readonly createdAt: string
  readonly network: Network
  readonly userId: string
}

/** Where a page starts: after the file created at `createdAt` with id `id`, in the page's order. */
export interface Cursor {
  readonly createdAt: string
  readonly id: string
}

/** One page of a workspace's files on one network; every filter left out matches all files. */
export interface PageQuery {
  readonly workspaceId: string
  readonly network: Network
  /** A part of the name, matched without regard to case. */
  readonly name?: string
  readonly cid?: string
  readonly mimeType?: string
  /** A group id, or null for files in no group. */
  readonly group?: string | null
  /** Key-values every file must have (a file may have more). */
  readonly keyvalues?: File.KeyValues
  readonly order: "ASC" | "DESC"
  readonly after: Option.Option<Cursor>
  readonly limit: number
}

interface Row {
  readonly id: string
  readonly name: string
  readonly cid: string
  readonly size: bigint
  readonly number_of_files: number
  readonly mime_type: string
  readonly keyvalues: File.KeyValues
  readonly group_id: string | null
  readonly created_at: Date
  readonly network: Network
  readonly user_id: string
}

const toView = (row: Row): FileView => ({
  id: row.id,
  name: row.name,
  cid: row.cid,
  size: Number(row.size),
  numberOfFiles: row.number_of_files,
  mimeType: row.mime_type,
  keyvalues: row.keyvalues,
  groupId: row.group_id,
  createdAt: row.created_at.toISOString(),
  network: row.network,
  userId: row.user_id
})

const columns = "id, name, cid, size, number_of_files, mime_type, keyvalues, group_id, created_at, network, user_id"

/** The queries the services make of it. */
export const queries = (sql: SqlClient.SqlClient) => ({
  /** The file, if this workspace has it on this network. */
  byId: (fileId: string, owner: { readonly workspaceId: string; readonly network: Network }) =>
    sql<Row>`SELECT ${sql.literal(columns)} FROM cairn_files
      WHERE id = ${fileId} AND workspace_id = ${owner.workspaceId} AND network = ${owner.network}`.pipe(
      Effect.orDie,
      Effect.map(([row]) => Option.map(Option.fromNullishOr(row), toView))
    ),

  /** Up to `limit` files after the cursor, ordered by creation then id (ties broken so pages never overlap). */
  page: (query: PageQuery) => {
    const conditions = [
      sql`workspace_id = ${query.workspaceId}`,
      sql`network = ${query.network}`,
      ...(query.name === undefined ? [] : [sql`name ILIKE ${"%" + query.name.replace(/[\\%_]/g, "\\$&") + "%"}`]),
      ...(query.cid === undefined ? [] : [sql`cid = ${query.cid}`]),
      ...(query.mimeType === undefined ? [] : [sql`mime_type = ${query.mimeType}`]),
      ...(query.group === undefined ? [] : [query.group === null ? sql`group_id IS NULL` : sql`group_id = ${query.group}`]),
      ...(query.keyvalues === undefined || Object.keys(query.keyvalues).length === 0
        ? []
        : [sql`keyvalues @> ${JSON.stringify(query.keyvalues)}::jsonb`]),
      ...Option.match(query.after, {
        onNone: () => [],
        onSome: ({ createdAt, id }) =>
          query.order === "ASC"
            ? [sql`(created_at, id) > (${createdAt}::timestamptz, ${id})`]
            : [sql`(created_at, id) < (${createdAt}::timestamptz, ${id})`]
      })
    ]
    const direction = sql.literal(query.order === "ASC" ? "ASC" : "DESC")
    return sql<Row>`SELECT ${sql.literal(columns)} FROM cairn_files WHERE ${sql.and(conditions)}
      ORDER BY created_at ${direction}, id ${direction} LIMIT ${query.limit}`.pipe(
      Effect.orDie,
      Effect.map((rows) => rows.map(toView))
    )
  },

  /** Whether this workspace holds a live file of this CID on this network (the index on workspace, network and CID). */
  holds: (owner: { readonly workspaceId: string; readonly network: Network }, cid: string) =>
    sql<{ readonly found: number }>`SELECT 1 AS found FROM cairn_files
      WHERE workspace_id = ${owner.workspaceId} AND network = ${owner.network} AND cid = ${cid} LIMIT 1`.pipe(
      Effect.orDie,
      Effect.map((rows) => rows.length > 0)
    ),

  /** Whether any workspace holds a live file of this CID on the public network: what the gateway may serve. */
  isPublic: (cid: string) =>
    sql<{ readonly found: number }>`SELECT 1 AS found FROM cairn_files WHERE network = 'public' AND cid = ${cid} LIMIT 1`.pipe(
      Effect.orDie,
      Effect.map((rows) => rows.length > 0)
    )
})
