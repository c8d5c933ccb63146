/**
 * `cairn_groups`: one row per live group (a delete removes it), for listing a workspace's groups on a network with
 * filters and keyset pagination, and reading one group.
 */
import { Group, type Network } from "@cairn/domain"
import { Effect, Option } from "effect"
import type { SqlClient } from "effect/sql"
import * as ReadModel from "./ReadModel.ts"

export const projection = ReadModel.make({
  name: "groups",
  events: Group.GroupEvent,
  tables: ["cairn_groups"],
  setup: (sql) =>
    Effect.all([
      sql`CREATE TABLE IF NOT EXISTS cairn_groups (
        id text PRIMARY KEY, workspace_id text NOT NULL, network text NOT NULL, name text NOT NULL,
        is_public boolean NOT NULL, created_at timestamptz NOT NULL)`,
      sql`CREATE INDEX IF NOT EXISTS cairn_groups_listing ON cairn_groups (workspace_id, network, created_at, id)`
    ]),
  on: {
    GroupCreated: (sql, e) =>
      sql`INSERT INTO cairn_groups (id, workspace_id, network, name, is_public, created_at)
        VALUES (${e.groupId}, ${e.workspaceId}, ${e.network}, ${e.name}, ${e.isPublic}, ${e.at})
        ON CONFLICT (id) DO NOTHING`,
    GroupUpdated: (sql, e) =>
      sql`UPDATE cairn_groups SET name = coalesce(${e.name ?? null}, name), is_public = coalesce(${e.isPublic ?? null}, is_public)
        WHERE id = ${e.groupId}`,
    GroupDeleted: (sql, e) => sql`DELETE FROM cairn_groups WHERE id = ${e.groupId}`
  }
})

/** A group as the groups API shows it. */
export interface GroupView {
  readonly id: string
  readonly name: string
  readonly isPublic: boolean
  readonly createdAt: string
  readonly network: Network
}

/** One page of a workspace's groups on one network, newest first; every filter left out matches all groups. */
export interface PageQuery {
  readonly workspaceId: string
  readonly network: Network
  /** A part of the name, matched without regard to case. */
  readonly name?: string
  readonly isPublic?: boolean
  /** After the group created at `createdAt` with id `id`, in the page's order. */
  readonly after: Option.Option<{ readonly createdAt: string; readonly id: string }>
  readonly limit: number
}

interface Row {
  readonly id: string
  readonly name: string
  readonly is_public: boolean
  readonly created_at: Date
  readonly network: Network
}

const toView = (row: Row): GroupView => ({
  id: row.id,
  name: row.name,
  isPublic: row.is_public,
  createdAt: row.created_at.toISOString(),
  network: row.network
})

/** The queries the services make of it. */
export const queries = (sql: SqlClient.SqlClient) => ({
  /** The group, if this workspace has it on this network. */
  byId: (groupId: string, owner: { readonly workspaceId: string; readonly network: Network }) =>
    sql<Row>`SELECT id, name, is_public, created_at, network FROM cairn_groups
      WHERE id = ${groupId} AND workspace_id = ${owner.workspaceId} AND network = ${owner.network}`.pipe(
      Effect.orDie,
      Effect.map(([row]) => Option.map(Option.fromNullishOr(row), toView))
    ),

  /** Up to `limit` groups after the cursor, newest first (ties broken by id, so pages never overlap). */
  page: (query: PageQuery) => {
    const conditions = [
      sql`workspace_id = ${query.workspaceId}`,
      sql`network = ${query.network}`,
      ...(query.name === undefined ? [] : [sql`name ILIKE ${ReadModel.containing(query.name)}`]),
      ...(query.isPublic === undefined ? [] : [sql`is_public = ${query.isPublic}`]),
      ...Option.match(query.after, {
        onNone: () => [],
        onSome: ({ createdAt, id }) => [sql`(created_at, id) < (${createdAt}::timestamptz, ${id})`]
      })
    ]
    return sql<Row>`SELECT id, name, is_public, created_at, network FROM cairn_groups WHERE ${sql.and(conditions)}
      ORDER BY created_at DESC, id DESC LIMIT ${query.limit}`.pipe(
      Effect.orDie,
      Effect.map((rows) => rows.map(toView))
    )
  }
})
