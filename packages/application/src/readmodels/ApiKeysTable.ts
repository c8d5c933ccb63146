/**
 * `cairn_api_keys`: one row per issued key, revoked or not, so authenticating a request is one lookup rather than
 * a read of the key's stream. A deleted workspace's keys are revoked with it.
 */
import { ApiKey, Workspace } from "@cairn/domain"
import { Effect, Option, Schema } from "effect"
import type { SqlClient } from "effect/sql"
import * as ReadModel from "./ReadModel.ts"

export const projection = ReadModel.make({
  name: "api-keys",
  events: Schema.Union([ApiKey.ApiKeyEvent, Workspace.WorkspaceEvent]),
  tables: ["cairn_api_keys"],
  setup: (sql) =>
    sql`CREATE TABLE IF NOT EXISTS cairn_api_keys (
      key_id text PRIMARY KEY, workspace_id text NOT NULL, user_id text NOT NULL, scopes text[] NOT NULL,
      expires_at timestamptz, revoked_at timestamptz, created_at timestamptz NOT NULL)`,
  on: {
    ApiKeyIssued: (sql, e) =>
      sql`INSERT INTO cairn_api_keys (key_id, workspace_id, user_id, scopes, expires_at, created_at)
        VALUES (${e.keyId}, ${e.workspaceId}, ${e.userId}, ${[...e.scopes]}::text[], ${e.expiresAt}, ${e.at})
        ON CONFLICT (key_id) DO NOTHING`,
    ApiKeyRevoked: (sql, e) => sql`UPDATE cairn_api_keys SET revoked_at = ${e.at} WHERE key_id = ${e.keyId}`,
    WorkspaceDeleted: (sql, e) =>
      sql`UPDATE cairn_api_keys SET revoked_at = ${e.at} WHERE workspace_id = ${e.workspaceId} AND revoked_at IS NULL`
  }
})

/** What authentication needs of a key besides its JWT: whose it is, and whether it was revoked. */
export interface KeyStanding {
  readonly workspaceId: string
  readonly revoked: boolean
}

/** The queries the services make of it. */
export const queries = (sql: SqlClient.SqlClient) => ({
  standing: (keyId: string) =>
    sql<{ readonly workspace_id: string; readonly revoked_at: Date | null }>`
      SELECT workspace_id, revoked_at FROM cairn_api_keys WHERE key_id = ${keyId}`.pipe(
      Effect.orDie,
      Effect.map(([row]) =>
        Option.map(Option.fromNullishOr(row), (row): KeyStanding => ({ workspaceId: row.workspace_id, revoked: row.revoked_at !== null }))
      )
    )
})
