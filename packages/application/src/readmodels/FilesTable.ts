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

/** One condition on a key-value, as Pinata's legacy `pinList` sends it (`metadata[keyvalues]={"k":{"value":…,"op":…}}`). */
export interface KeyValueCondition {
  readonly key: string
  readonly op: KeyValueOp
  readonly value: string | number | boolean
  readonly secondValue?: string | number | boolean
}

export type KeyValueOp =
  | "eq" | "ne" | "gt" | "gte" | "lt" | "lte" | "between" | "notBetween"
  | "like" | "notLike" | "iLike" | "notILike" | "regexp" | "iRegexp"

/** A page of Pinata's legacy `pinList`: newest first, by offset; every filter left out matches all files. */
export interface LegacyPageQuery {
  readonly workspaceId: string
  readonly network: Network
  /** A part of the CID (case-sensitive: CIDs are). */
  readonly hashContains?: string
  /** Pinned at or after / at or before (ISO 8601). */
  readonly pinStart?: string
  readonly pinEnd?: string
  readonly sizeMin?: number
  readonly sizeMax?: number
  /** A part of the name, matched without regard to case. */
  readonly name?: string
  readonly keyvalues?: ReadonlyArray<KeyValueCondition>
  readonly limit: number
  readonly offset: number
}

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
      ...(query.name === undefined ? [] : [sql`name ILIKE ${ReadModel.containing(query.name)}`]),
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
,

  /** The workspace's live files of this CID on this network, oldest first. */
  byCid: (owner: { readonly workspaceId: string; readonly network: Network }, cid: string) =>
    sql<Row>`SELECT ${sql.literal(columns)} FROM cairn_files
      WHERE workspace_id = ${owner.workspaceId} AND network = ${owner.network} AND cid = ${cid}
      ORDER BY created_at, id`.pipe(
      Effect.orDie,
      Effect.map((rows) => rows.map(toView))
    ),

  /**
   * A page of the legacy `pinList` and how many files match in all. Values compared with `gt`…`notBetween` compare as
   * numbers when the value given is a number (a stored value that is not a number then never matches), as text
   * otherwise; `like` takes SQL's `%` and `_`; `regexp` is PostgreSQL's regular expression (`~`). The SQL fails for
   * a regular expression PostgreSQL refuses: the caller maps that (`regexp` in the query) to 400.
   */
  legacyPage: (query: LegacyPageQuery) => {
    const numeric = (key: string) => sql`(CASE WHEN (keyvalues ->> ${key}) ~ '^-?[0-9]+([.][0-9]+)?$' THEN (keyvalues ->> ${key})::numeric END)`
    const side = (condition: KeyValueCondition) =>
      typeof condition.value === "number" ? numeric(condition.key) : sql`(keyvalues ->> ${condition.key})`
    const operand = (condition: KeyValueCondition, value: string | number | boolean) =>
      typeof condition.value === "number" ? sql`${Number(value)}::numeric` : sql`${String(value)}::text`
    const keyvalue = (c: KeyValueCondition) => {
      const left = side(c)
      const value = operand(c, c.value)
      switch (c.op) {
        case "eq":
          return sql`${left} = ${value}`
        case "ne":
          return sql`${left} <> ${value}`
        case "gt":
          return sql`${left} > ${value}`
        case "gte":
          return sql`${left} >= ${value}`
        case "lt":
          return sql`${left} < ${value}`
        case "lte":
          return sql`${left} <= ${value}`
        case "between":
          return sql`${left} BETWEEN ${value} AND ${operand(c, c.secondValue ?? c.value)}`
        case "notBetween":
          return sql`${left} NOT BETWEEN ${value} AND ${operand(c, c.secondValue ?? c.value)}`
        case "like":
          return sql`(keyvalues ->> ${c.key}) LIKE ${String(c.value)}`
        case "notLike":
          return sql`(keyvalues ->> ${c.key}) NOT LIKE ${String(c.value)}`
        case "iLike":
          return sql`(keyvalues ->> ${c.key}) ILIKE ${String(c.value)}`
        case "notILike":
          return sql`(keyvalues ->> ${c.key}) NOT ILIKE ${String(c.value)}`
        case "regexp":
          return sql`(keyvalues ->> ${c.key}) ~ ${String(c.value)}`
        case "iRegexp":
          return sql`(keyvalues ->> ${c.key}) ~* ${String(c.value)}`
      }
    }
    const conditions = [
      sql`workspace_id = ${query.workspaceId}`,
      sql`network = ${query.network}`,
      ...(query.hashContains === undefined ? [] : [sql`strpos(cid, ${query.hashContains}) > 0`]),
      ...(query.pinStart === undefined ? [] : [sql`created_at >= ${query.pinStart}::timestamptz`]),
      ...(query.pinEnd === undefined ? [] : [sql`created_at <= ${query.pinEnd}::timestamptz`]),
      ...(query.sizeMin === undefined ? [] : [sql`size >= ${query.sizeMin}`]),
      ...(query.sizeMax === undefined ? [] : [sql`size <= ${query.sizeMax}`]),
      ...(query.name === undefined ? [] : [sql`name ILIKE ${ReadModel.containing(query.name)}`]),
      ...(query.keyvalues ?? []).map(keyvalue)
    ]
    const where = sql.and(conditions)
    return Effect.all([
      sql<Row>`SELECT ${sql.literal(columns)} FROM cairn_files WHERE ${where}
        ORDER BY created_at DESC, id DESC LIMIT ${query.limit} OFFSET ${query.offset}`,
      sql<{ readonly count: number | bigint | string }>`SELECT count(*) AS count FROM cairn_files WHERE ${where}`
    ]).pipe(
      Effect.map(([rows, [counted]]) => ({ rows: rows.map(toView), count: Number(counted?.count ?? 0) }))
    )
  }
})
