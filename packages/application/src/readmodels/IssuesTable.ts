/** `cairn_issues`: one row per filed issue, for listing a workspace's issues. */
import { Issue } from "@cairn/domain"
import { Effect } from "effect"
import type { SqlClient } from "effect/sql"
import * as ReadModel from "./ReadModel.ts"

export const projection = ReadModel.make({
  name: "issues",
  events: Issue.IssueEvent,
  tables: ["cairn_issues"],
  setup: (sql) =>
    sql`CREATE TABLE IF NOT EXISTS cairn_issues (
      id text PRIMARY KEY, workspace_id text NOT NULL, user_id text NOT NULL, title text NOT NULL, body text NOT NULL,
      created_at timestamptz NOT NULL)`,
  on: {
    IssueFiled: (sql, e) =>
      sql`INSERT INTO cairn_issues (id, workspace_id, user_id, title, body, created_at)
        VALUES (${e.issueId}, ${e.workspaceId}, ${e.userId}, ${e.title}, ${e.body}, ${e.at})
        ON CONFLICT (id) DO NOTHING`
  }
})

/** An issue as the issues endpoints list it. */
export interface IssueView {
  readonly id: string
  readonly title: string
  readonly body: string
  readonly userId: string
  readonly createdAt: string
}

/** The queries the services make of it. */
export const queries = (sql: SqlClient.SqlClient) => ({
  /** The workspace's issues, oldest first. */
  inWorkspace: (workspaceId: string) =>
    sql<{ readonly id: string; readonly title: string; readonly body: string; readonly user_id: string; readonly created_at: Date }>`
      SELECT id, title, body, user_id, created_at FROM cairn_issues WHERE workspace_id = ${workspaceId} ORDER BY created_at`.pipe(
      Effect.orDie,
      Effect.map((rows) =>
        rows.map((row): IssueView => ({ id: row.id, title: row.title, body: row.body, userId: row.user_id, createdAt: row.created_at.toISOString() }))
      )
    )
})
