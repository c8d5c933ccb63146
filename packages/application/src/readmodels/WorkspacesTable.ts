/** `cairn_workspaces`: one row per workspace, for reading a workspace back and for the issues endpoints' check. */
import { Workspace } from "@cairn/domain"
import { Effect, Option } from "effect"
import type { SqlClient } from "effect/sql"
import * as ReadModel from "./ReadModel.ts"

export const projection = ReadModel.make({
  name: "workspaces",
  events: Workspace.WorkspaceEvent,
  tables: ["cairn_workspaces"],
  setup: (sql) =>
    sql`CREATE TABLE IF NOT EXISTS cairn_workspaces (
      id text PRIMARY KEY, name text NOT NULL, plan text NOT NULL, agent_limit int NOT NULL,
      internal boolean NOT NULL, created_at timestamptz NOT NULL)`,
  on: {
    WorkspaceCreated: (sql, e) =>
      sql`INSERT INTO cairn_workspaces (id, name, plan, agent_limit, internal, created_at)
        VALUES (${e.workspaceId}, ${e.name}, ${e.plan}, ${e.agentLimit}, ${e.internal}, ${e.at})
        ON CONFLICT (id) DO NOTHING`,
    WorkspaceDeleted: (sql, e) => sql`DELETE FROM cairn_workspaces WHERE id = ${e.workspaceId}`
  }
})

/** A workspace as the admin API shows it. */
export interface WorkspaceView {
  readonly id: string
  readonly name: string
  readonly plan: Workspace.Plan
  readonly agentLimit: number
  readonly internal: boolean
  readonly createdAt: string
}

interface Row {
  readonly id: string
  readonly name: string
  readonly plan: Workspace.Plan
  readonly agent_limit: number
  readonly internal: boolean
  readonly created_at: Date
}

const toView = (row: Row): WorkspaceView => ({
  id: row.id,
  name: row.name,
  plan: row.plan,
  agentLimit: row.agent_limit,
  internal: row.internal,
  createdAt: row.created_at.toISOString()
})

/** The queries the services make of it. */
export const queries = (sql: SqlClient.SqlClient) => ({
  byId: (workspaceId: string) =>
    sql<Row>`SELECT id, name, plan, agent_limit, internal, created_at FROM cairn_workspaces WHERE id = ${workspaceId}`.pipe(
      Effect.orDie,
      Effect.map(([row]) => Option.map(Option.fromNullishOr(row), toView))
    )
})
