/**
 * `cairn_audit_webhooks`: one row per registered audit webhook, for listing a workspace's and for the delivery
 * worker, which delivers to every row. How far each has been delivered is not here (a rebuild would lose it): it is
 * `cairn_audit_webhook_cursors`, a table of the worker's own (audit/AuditFeed.ts).
 */
import { Audit, type Secret } from "@cairn/domain"
import { Effect } from "effect"
import type { SqlClient } from "effect/sql"
import * as ReadModel from "./ReadModel.ts"

export const projection = ReadModel.make({
  name: "audit-webhooks",
  events: Audit.AuditWebhookEvent,
  tables: ["cairn_audit_webhooks"],
  setup: (sql) =>
    sql`CREATE TABLE IF NOT EXISTS cairn_audit_webhooks (
      id text PRIMARY KEY, workspace_id text NOT NULL, user_id text NOT NULL, url text NOT NULL, sealed text NOT NULL,
      created_at timestamptz NOT NULL)`,
  on: {
    AuditWebhookRegistered: (sql, e) =>
      sql`INSERT INTO cairn_audit_webhooks (id, workspace_id, user_id, url, sealed, created_at)
        VALUES (${e.webhookId}, ${e.workspaceId}, ${e.userId}, ${e.url}, ${JSON.stringify(e.sealed)}, ${e.at})
        ON CONFLICT (id) DO NOTHING`,
    AuditWebhookRemoved: (sql, e) => sql`DELETE FROM cairn_audit_webhooks WHERE id = ${e.webhookId}`
  }
})

/** A webhook as the worker delivers to it. */
export interface AuditWebhookRow {
  readonly id: string
  readonly workspaceId: string
  readonly url: string
  readonly sealed: Secret.Sealed
  readonly createdAt: string
}

interface Row {
  readonly id: string
  readonly workspace_id: string
  readonly url: string
  readonly sealed: string
  readonly created_at: Date
}

const rowOf = (row: Row): AuditWebhookRow => ({
  id: row.id,
  workspaceId: row.workspace_id,
  url: row.url,
  sealed: JSON.parse(row.sealed) as Secret.Sealed,
  createdAt: row.created_at.toISOString()
})

/** The queries the services make of it. */
export const queries = (sql: SqlClient.SqlClient) => ({
  /** The workspace's webhooks, oldest first. */
  inWorkspace: (workspaceId: string) =>
    sql<Row>`SELECT id, workspace_id, url, sealed, created_at FROM cairn_audit_webhooks WHERE workspace_id = ${workspaceId}
      ORDER BY created_at, id`.pipe(Effect.orDie, Effect.map((rows) => rows.map(rowOf))),
  /** Every webhook of every workspace. */
  all: sql<Row>`SELECT id, workspace_id, url, sealed, created_at FROM cairn_audit_webhooks ORDER BY created_at, id`.pipe(
    Effect.orDie,
    Effect.map((rows) => rows.map(rowOf))
  )
})
