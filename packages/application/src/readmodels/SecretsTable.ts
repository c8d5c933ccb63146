/**
 * `cairn_secrets`: one row per live secret (name, value version, times; never a value or a ciphertext), and
 * `cairn_agent_secrets`: which agents hold which secrets and the value version each gateway was started with, so
 * `synced` is whether that is the secret's current version. Lists and the agent view read them.
 */
import { Agent, Secret } from "@cairn/domain"
import { Effect, Schema } from "effect"
import type { SqlClient } from "effect/sql"
import * as ReadModel from "./ReadModel.ts"

export const projection = ReadModel.make({
  name: "secrets",
  events: Schema.Union([Secret.SecretEvent, Agent.AgentEvent]),
  tables: ["cairn_secrets", "cairn_agent_secrets"],
  setup: (sql) =>
    Effect.all([
      sql`CREATE TABLE IF NOT EXISTS cairn_secrets (
        id text PRIMARY KEY, workspace_id text NOT NULL, user_id text NOT NULL, name text NOT NULL, version int NOT NULL,
        created_at timestamptz NOT NULL, updated_at timestamptz NOT NULL)`,
      sql`CREATE INDEX IF NOT EXISTS cairn_secrets_workspace ON cairn_secrets (workspace_id, name)`,
      sql`CREATE TABLE IF NOT EXISTS cairn_agent_secrets (
        agent_id text NOT NULL, secret_id text NOT NULL, delivered_version int, attached_at timestamptz NOT NULL,
        PRIMARY KEY (agent_id, secret_id))`,
      sql`CREATE INDEX IF NOT EXISTS cairn_agent_secrets_secret ON cairn_agent_secrets (secret_id)`
    ]),
  on: {
    SecretCreated: (sql, e) =>
      sql`INSERT INTO cairn_secrets (id, workspace_id, user_id, name, version, created_at, updated_at)
        VALUES (${e.secretId}, ${e.workspaceId}, ${e.userId}, ${e.name}, 1, ${e.at}, ${e.at}) ON CONFLICT (id) DO NOTHING`,
    SecretValueChanged: (sql, e) => sql`UPDATE cairn_secrets SET version = ${e.version}, updated_at = ${e.at} WHERE id = ${e.secretId}`,
    SecretDeleted: (sql, e) => sql`DELETE FROM cairn_secrets WHERE id = ${e.secretId}`,
    AgentSecretsAttached: (sql, e) =>
      Effect.forEach(e.secrets, (s) =>
        sql`INSERT INTO cairn_agent_secrets (agent_id, secret_id, attached_at) VALUES (${e.agentId}, ${s.secretId}, ${e.at})
          ON CONFLICT (agent_id, secret_id) DO NOTHING`, { discard: true }),
    AgentSecretDetached: (sql, e) => sql`DELETE FROM cairn_agent_secrets WHERE agent_id = ${e.agentId} AND secret_id = ${e.secretId}`,
    AgentStarted: (sql, e) =>
      Effect.forEach(e.secrets ?? [], (s) =>
        sql`UPDATE cairn_agent_secrets SET delivered_version = ${s.version} WHERE agent_id = ${e.agentId} AND secret_id = ${s.secretId}`, {
        discard: true
      }),
    AgentDeleted: (sql, e) => sql`DELETE FROM cairn_agent_secrets WHERE agent_id = ${e.agentId}`
  }
})

/** A secret as `GET /v0/secrets` lists it. */
export interface SecretView {
  readonly id: string
  readonly userId: string
  readonly name: string
  readonly createdAt: string
  readonly updatedAt: string
}

export interface SecretListing extends SecretView {
  readonly agents: ReadonlyArray<{ readonly agentId: string; readonly name: string }>
}

/** A secret as an agent holds it. */
export interface AgentSecretView {
  readonly id: string
  readonly name: string
  readonly createdAt: string
  readonly updatedAt: string
  /** The current value's version (1 for the first value; never the value). */
  readonly version: number
  /** Whether the running gateway has the secret's current value (a restart applies changes). */
  readonly synced: boolean
}

interface SecretRow {
  readonly id: string
  readonly user_id: string
  readonly name: string
  readonly created_at: Date
  readonly updated_at: Date
}

const toView = (row: SecretRow): SecretView => ({
  id: row.id,
  userId: row.user_id,
  name: row.name,
  createdAt: row.created_at.toISOString(),
  updatedAt: row.updated_at.toISOString()
})

/** The queries the services make of them. */
export const queries = (sql: SqlClient.SqlClient) => ({
  /** The workspace's secrets by name, each with the agents holding it. */
  inWorkspace: (workspaceId: string) =>
    sql<SecretRow & { readonly agent_id: string | null; readonly agent_name: string | null }>`
      SELECT s.id, s.user_id, s.name, s.created_at, s.updated_at, a.id AS agent_id, a.name AS agent_name
        FROM cairn_secrets s
        LEFT JOIN cairn_agent_secrets x ON x.secret_id = s.id
        LEFT JOIN cairn_agents a ON a.id = x.agent_id
       WHERE s.workspace_id = ${workspaceId}
       ORDER BY s.name, s.id, a.created_at, a.id`.pipe(
      Effect.orDie,
      Effect.map((rows) => {
        const listed = new Map<string, SecretListing & { agents: Array<{ agentId: string; name: string }> }>()
        for (const row of rows) {
          const entry = listed.get(row.id) ?? { ...toView(row), agents: [] }
          listed.set(row.id, entry)
          if (row.agent_id !== null && row.agent_name !== null) entry.agents.push({ agentId: row.agent_id, name: row.agent_name })
        }
        return [...listed.values()] as ReadonlyArray<SecretListing>
      })
    ),
  /** The agent's secrets, and whether its gateway has each one's current value. */
  ofAgent: (agentId: string) =>
    sql<SecretRow & { readonly version: number; readonly synced: boolean }>`
      SELECT s.id, s.user_id, s.name, s.version, s.created_at, s.updated_at, coalesce(x.delivered_version = s.version, false) AS synced
        FROM cairn_agent_secrets x JOIN cairn_secrets s ON s.id = x.secret_id
       WHERE x.agent_id = ${agentId}
       ORDER BY s.name`.pipe(
      Effect.orDie,
      Effect.map((rows) =>
        rows.map((row): AgentSecretView => ({
          id: row.id,
          name: row.name,
          createdAt: row.created_at.toISOString(),
          updatedAt: row.updated_at.toISOString(),
          version: row.version,
          synced: row.synced
        }))
      )
    )
})
