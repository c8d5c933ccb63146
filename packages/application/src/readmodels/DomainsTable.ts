/**
 * `cairn_domains`: one row per domain of every agent (removed ones are deleted). The list endpoint, the app
 * router's host lookup (`routeFor`, through the index on the active names), the TLS ask endpoint and the background
 * re-check of pending custom domains read it. An agent's deletion marks its rows at once, so routing stops in the
 * same transaction; the Domains service then removes them (and releases their names).
 */
import { Agent, Domain } from "@cairn/domain"
import { Effect, Option, Schema } from "effect"
import type { SqlClient } from "effect/sql"
import * as ReadModel from "./ReadModel.ts"

export const projection = ReadModel.make({
  name: "domains",
  events: Schema.Union([Domain.DomainEvent, Agent.AgentEvent]),
  tables: ["cairn_domains"],
  setup: (sql) =>
    Effect.all([
      sql`CREATE TABLE IF NOT EXISTS cairn_domains (
        domain_id text PRIMARY KEY, agent_id text NOT NULL, workspace_id text NOT NULL, kind text NOT NULL, name text NOT NULL,
        target_port int NOT NULL, protected boolean NOT NULL, status text NOT NULL, verification_value text,
        agent_deleted boolean NOT NULL DEFAULT false, created_at timestamptz NOT NULL, updated_at timestamptz NOT NULL)`,
      sql`CREATE INDEX IF NOT EXISTS cairn_domains_agent ON cairn_domains (agent_id, created_at)`,
      sql`CREATE INDEX IF NOT EXISTS cairn_domains_name ON cairn_domains (name, kind) WHERE status = 'active'`,
      sql`CREATE INDEX IF NOT EXISTS cairn_domains_pending ON cairn_domains (status) WHERE status = 'pending_ownership' OR agent_deleted`
    ]),
  on: {
    DomainAdded: (sql, e) =>
      sql`INSERT INTO cairn_domains (domain_id, agent_id, workspace_id, kind, name, target_port, protected, status, verification_value,
          created_at, updated_at)
        VALUES (${e.domainId}, ${e.agentId}, ${e.workspaceId}, ${e.kind}, ${e.name}, ${e.targetPort}, ${e.protected}, ${e.status},
          ${e.verificationValue ?? null}, ${e.at}, ${e.at}) ON CONFLICT DO NOTHING`,
    DomainChanged: (sql, e) =>
      sql`UPDATE cairn_domains SET target_port = ${e.targetPort}, protected = ${e.protected}, updated_at = ${e.at} WHERE domain_id = ${e.domainId}`,
    DomainVerified: (sql, e) => sql`UPDATE cairn_domains SET status = 'active', updated_at = ${e.at} WHERE domain_id = ${e.domainId}`,
    DomainExpired: (sql, e) => sql`UPDATE cairn_domains SET status = 'expired', updated_at = ${e.at} WHERE domain_id = ${e.domainId}`,
    DomainRemoved: (sql, e) => sql`DELETE FROM cairn_domains WHERE domain_id = ${e.domainId}`,
    AgentDeleted: (sql, e) => sql`UPDATE cairn_domains SET agent_deleted = true WHERE agent_id = ${e.agentId}`
  }
})

interface Row {
  readonly domain_id: string
  readonly agent_id: string
  readonly workspace_id: string
  readonly kind: Domain.Kind
  readonly name: string
  readonly target_port: number
  readonly protected: boolean
  readonly status: Domain.Status
  readonly verification_value: string | null
  readonly created_at: Date
  readonly updated_at: Date
}

const toDomain = (row: Row): Domain.Domain => ({
  domainId: row.domain_id,
  agentId: row.agent_id,
  workspaceId: row.workspace_id,
  kind: row.kind,
  name: row.name,
  targetPort: row.target_port,
  protected: row.protected,
  status: row.status,
  verificationValue: row.verification_value ?? undefined,
  createdAt: row.created_at.toISOString(),
  updatedAt: row.updated_at.toISOString()
})

const columns = "domain_id, agent_id, workspace_id, kind, name, target_port, protected, status, verification_value, created_at, updated_at"

/** The queries the services make of it. */
export const queries = (sql: SqlClient.SqlClient) => ({
  /** The agent's domains, oldest first. */
  ofAgent: (agentId: string) =>
    sql<Row>`SELECT ${sql.literal(columns)} FROM cairn_domains WHERE agent_id = ${agentId} AND NOT agent_deleted ORDER BY created_at, domain_id`.pipe(
      Effect.orDie,
      Effect.map((rows) => rows.map(toDomain))
    ),
  /** The active domain of that kind and name, of a live agent. */
  active: (kind: Domain.Kind, name: string) =>
    sql<Row>`SELECT ${sql.literal(columns)} FROM cairn_domains
      WHERE name = ${name} AND kind = ${kind} AND status = 'active' AND NOT agent_deleted LIMIT 1`.pipe(
      Effect.orDie,
      Effect.map(([row]) => Option.map(Option.fromNullishOr(row), toDomain))
    ),
  /** Custom domains still waiting for their TXT record, of live agents. */
  pending: sql<Row>`SELECT ${sql.literal(columns)} FROM cairn_domains WHERE status = 'pending_ownership' AND NOT agent_deleted`.pipe(
    Effect.orDie,
    Effect.map((rows) => rows.map(toDomain))
  ),
  /** Domains whose agent was deleted (or is gone) and that are not removed yet. */
  orphaned: sql<Row>`SELECT ${sql.literal(columns)} FROM cairn_domains d
    WHERE agent_deleted OR NOT EXISTS (SELECT 1 FROM cairn_agents a WHERE a.id = d.agent_id)`.pipe(
    Effect.orDie,
    Effect.map((rows) => rows.map(toDomain))
  )
})
