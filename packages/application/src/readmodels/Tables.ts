/**
 * The inline read models of workspaces, API keys, files and signatures: SQL tables kept in the append's
 * transaction, so a read right after a write sees it. Each is rebuilt from the log by `cli replay <name>`.
 */
import type { Projection, RecordedEvent } from "@cairn/event-store"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

type Data = Record<string, unknown>
const of = (event: RecordedEvent) => event.data as Data

const table = (name: string, setup: (sql: SqlClient.SqlClient) => Effect.Effect<unknown, unknown>, apply: (sql: SqlClient.SqlClient, event: RecordedEvent) => Effect.Effect<unknown, unknown> | undefined, tables: ReadonlyArray<string>): Projection<SqlClient.SqlClient> => ({
  name,
  setup: SqlClient.SqlClient.use(setup),
  apply: (events) =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      for (const event of events) {
        const statement = apply(sql, event)
        if (statement !== undefined) yield* statement
      }
    }),
  reset: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    for (const t of tables) yield* sql`DELETE FROM ${sql(t)}`
  })
})

export const workspaces = table(
  "workspaces",
  (sql) => sql`CREATE TABLE IF NOT EXISTS cairn_workspaces (
    id text PRIMARY KEY, name text NOT NULL, plan text NOT NULL, agent_limit int NOT NULL,
    internal boolean NOT NULL, created_at timestamptz NOT NULL)`,
  (sql, event) => {
    const d = of(event)
    return event.type === "WorkspaceCreated"
      ? sql`INSERT INTO cairn_workspaces (id, name, plan, agent_limit, internal, created_at)
          VALUES (${d["workspaceId"] as string}, ${d["name"] as string}, ${d["plan"] as string}, ${d["agentLimit"] as number}, ${d["internal"] as boolean}, ${d["at"] as string})
          ON CONFLICT (id) DO NOTHING`
      : undefined
  },
  ["cairn_workspaces"]
)

export const apiKeys = table(
  "api-keys",
  (sql) => sql`CREATE TABLE IF NOT EXISTS cairn_api_keys (
    key_id text PRIMARY KEY, workspace_id text NOT NULL, user_id text NOT NULL, scopes text[] NOT NULL,
    expires_at timestamptz, revoked_at timestamptz, created_at timestamptz NOT NULL)`,
  (sql, event) => {
    const d = of(event)
    switch (event.type) {
      case "ApiKeyIssued":
        return sql`INSERT INTO cairn_api_keys (key_id, workspace_id, user_id, scopes, expires_at, created_at)
          VALUES (${d["keyId"] as string}, ${d["workspaceId"] as string}, ${d["userId"] as string}, ${d["scopes"] as Array<string>}::text[], ${d["expiresAt"] as string | null}, ${d["at"] as string})
          ON CONFLICT (key_id) DO NOTHING`
      case "ApiKeyRevoked":
        return sql`UPDATE cairn_api_keys SET revoked_at = ${d["at"] as string} WHERE key_id = ${d["keyId"] as string}`
    }
    return undefined
  },
  ["cairn_api_keys"]
)

export const files = table(
  "files",
  (sql) =>
    Effect.all([
      sql`CREATE TABLE IF NOT EXISTS cairn_files (
        id text PRIMARY KEY, workspace_id text NOT NULL, user_id text NOT NULL, network text NOT NULL,
        cid text NOT NULL, name text NOT NULL, size bigint NOT NULL, mime_type text NOT NULL, group_id text,
        keyvalues jsonb NOT NULL, number_of_files int NOT NULL, created_at timestamptz NOT NULL)`,
      sql`CREATE INDEX IF NOT EXISTS cairn_files_listing ON cairn_files (workspace_id, network, created_at, id)`,
      sql`CREATE INDEX IF NOT EXISTS cairn_files_cid ON cairn_files (workspace_id, network, cid)`
    ]),
  (sql, event) => {
    const d = of(event)
    switch (event.type) {
      case "FileUploaded":
        return sql`INSERT INTO cairn_files (id, workspace_id, user_id, network, cid, name, size, mime_type, group_id, keyvalues, number_of_files, created_at)
          VALUES (${d["fileId"] as string}, ${d["workspaceId"] as string}, ${d["userId"] as string}, ${d["network"] as string}, ${d["cid"] as string},
            ${d["name"] as string}, ${d["size"] as number}, ${d["mimeType"] as string}, ${d["groupId"] as string | null},
            ${JSON.stringify(d["keyvalues"])}::jsonb, ${d["numberOfFiles"] as number}, ${d["at"] as string})
          ON CONFLICT (id) DO NOTHING`
      case "FileUpdated":
        return sql`UPDATE cairn_files SET
            name = coalesce(${(d["name"] as string | undefined) ?? null}, name),
            keyvalues = coalesce(${d["keyvalues"] === undefined ? null : JSON.stringify(d["keyvalues"])}::jsonb, keyvalues)
          WHERE id = ${d["fileId"] as string}`
      case "FileDeleted":
        return sql`DELETE FROM cairn_files WHERE id = ${d["fileId"] as string}`
    }
    return undefined
  },
  ["cairn_files"]
)

export const signatures = table(
  "signatures",
  (sql) => sql`CREATE TABLE IF NOT EXISTS cairn_signatures (
    network text NOT NULL, cid text NOT NULL, workspace_id text NOT NULL, address text NOT NULL,
    signature text NOT NULL, created_at timestamptz NOT NULL, PRIMARY KEY (network, cid))`,
  (sql, event) => {
    const d = of(event)
    switch (event.type) {
      case "SignatureAdded":
        return sql`INSERT INTO cairn_signatures (network, cid, workspace_id, address, signature, created_at)
          VALUES (${d["network"] as string}, ${d["cid"] as string}, ${d["workspaceId"] as string}, ${d["address"] as string}, ${d["signature"] as string}, ${d["at"] as string})
          ON CONFLICT (network, cid) DO UPDATE SET workspace_id = excluded.workspace_id, address = excluded.address,
            signature = excluded.signature, created_at = excluded.created_at`
      case "SignatureRemoved":
        return sql`DELETE FROM cairn_signatures WHERE network = ${d["network"] as string} AND cid = ${d["cid"] as string}`
    }
    return undefined
  },
  ["cairn_signatures"]
)

export const agents = table(
  "agents",
  (sql) =>
    sql`CREATE TABLE IF NOT EXISTS cairn_agents (
      id text PRIMARY KEY, workspace_id text NOT NULL, user_id text NOT NULL, name text NOT NULL,
      engine_version text NOT NULL, status text NOT NULL, token_generation int NOT NULL, created_at timestamptz NOT NULL)`.pipe(
      // Added with crash recovery; `cli replay agents` fills it in for agents recorded before.
      Effect.andThen(sql`ALTER TABLE cairn_agents ADD COLUMN IF NOT EXISTS recovering boolean NOT NULL DEFAULT false`),
      Effect.andThen(sql`ALTER TABLE cairn_agents ADD COLUMN IF NOT EXISTS node text`)
    ),
  (sql, event) => {
    const d = of(event)
    const id = d["agentId"] as string
    switch (event.type) {
      case "AgentCreated":
        return sql`INSERT INTO cairn_agents (id, workspace_id, user_id, name, engine_version, status, token_generation, node, created_at)
          VALUES (${id}, ${d["workspaceId"] as string}, ${d["userId"] as string}, ${d["name"] as string}, ${d["engineVersion"] as string}, 'starting', 0, ${(d["node"] as string | undefined) ?? null}, ${d["at"] as string})
          ON CONFLICT (id) DO NOTHING`
      case "AgentStarted":
        return sql`UPDATE cairn_agents SET status = 'running', engine_version = ${d["engineVersion"] as string}, recovering = false,
          node = COALESCE(${(d["node"] as string | undefined) ?? null}, node) WHERE id = ${id}`
      case "AgentFailedToStart":
        return sql`UPDATE cairn_agents SET status = 'not_running' WHERE id = ${id}`
      case "AgentStopped":
        return sql`UPDATE cairn_agents SET status = 'not_running', recovering = recovering OR ${d["reason"] === "crashed"} WHERE id = ${id}`
      case "AgentRecoveryScheduled":
        return sql`UPDATE cairn_agents SET recovering = true WHERE id = ${id}`
      case "AgentRestartRequested":
        return sql`UPDATE cairn_agents SET status = 'starting' WHERE id = ${id}`
      case "GatewayTokenRotated":
        return sql`UPDATE cairn_agents SET token_generation = ${d["generation"] as number} WHERE id = ${id}`
      case "AgentDeleted":
        return sql`DELETE FROM cairn_agents WHERE id = ${id}`
    }
    return undefined
  },
  ["cairn_agents"]
)

export const issues = table(
  "issues",
  (sql) => sql`CREATE TABLE IF NOT EXISTS cairn_issues (
    id text PRIMARY KEY, workspace_id text NOT NULL, user_id text NOT NULL, title text NOT NULL, body text NOT NULL,
    created_at timestamptz NOT NULL)`,
  (sql, event) => {
    const d = of(event)
    return event.type === "IssueFiled"
      ? sql`INSERT INTO cairn_issues (id, workspace_id, user_id, title, body, created_at)
          VALUES (${d["issueId"] as string}, ${d["workspaceId"] as string}, ${d["userId"] as string}, ${d["title"] as string}, ${d["body"] as string}, ${d["at"] as string})
          ON CONFLICT (id) DO NOTHING`
      : undefined
  },
  ["cairn_issues"]
)

export const all: ReadonlyArray<Projection<SqlClient.SqlClient>> = [workspaces, apiKeys, files, signatures, agents, issues]
