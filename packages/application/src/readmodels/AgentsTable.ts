/**
 * `cairn_agents`: one row per live agent (a delete removes it), for the agents list, gateway-token checks and the
 * supervisor's sweeps over the agents this node runs.
 */
import { Agent } from "@cairn/domain"
import { Effect, Option } from "effect"
import type { SqlClient } from "effect/sql"
import * as ReadModel from "./ReadModel.ts"

export const projection = ReadModel.make({
  name: "agents",
  events: Agent.AgentEvent,
  tables: ["cairn_agents"],
  setup: (sql) =>
    sql`CREATE TABLE IF NOT EXISTS cairn_agents (
      id text PRIMARY KEY, workspace_id text NOT NULL, user_id text NOT NULL, name text NOT NULL,
      engine_version text NOT NULL, status text NOT NULL, token_generation int NOT NULL, created_at timestamptz NOT NULL)`.pipe(
      // Added with crash recovery; `cli replay --in-place agents` fills it in for agents recorded before.
      Effect.andThen(sql`ALTER TABLE cairn_agents ADD COLUMN IF NOT EXISTS recovering boolean NOT NULL DEFAULT false`),
      Effect.andThen(sql`ALTER TABLE cairn_agents ADD COLUMN IF NOT EXISTS node text`),
      // Added with per-agent limits (decision 0042): why and when its gateway last stopped.
      Effect.andThen(sql`ALTER TABLE cairn_agents ADD COLUMN IF NOT EXISTS last_stop_reason text`),
      Effect.andThen(sql`ALTER TABLE cairn_agents ADD COLUMN IF NOT EXISTS last_stop_at timestamptz`),
      // Added with the agent's profile (PATCH /v0/agents/{id}).
      Effect.andThen(sql`ALTER TABLE cairn_agents ADD COLUMN IF NOT EXISTS description text`),
      Effect.andThen(sql`ALTER TABLE cairn_agents ADD COLUMN IF NOT EXISTS vibe text`),
      Effect.andThen(sql`ALTER TABLE cairn_agents ADD COLUMN IF NOT EXISTS emoji text`),
      // Added with chat through the API: the model the agent answers with (null for agents that never set one).
      Effect.andThen(sql`ALTER TABLE cairn_agents ADD COLUMN IF NOT EXISTS model text`),
      // Added with sleep and wake (decision 0055): since when it sleeps, and when Cairn wakes it for a task.
      Effect.andThen(sql`ALTER TABLE cairn_agents ADD COLUMN IF NOT EXISTS asleep_since timestamptz`),
      Effect.andThen(sql`ALTER TABLE cairn_agents ADD COLUMN IF NOT EXISTS wake_at timestamptz`),
      // And why its last start (or wake) failed, shown while it is not running.
      Effect.andThen(sql`ALTER TABLE cairn_agents ADD COLUMN IF NOT EXISTS start_failure text`),
      Effect.andThen(sql`ALTER TABLE cairn_agents ADD COLUMN IF NOT EXISTS start_failure_at timestamptz`)
    ),
  on: {
    AgentCreated: (sql, e) =>
      sql`INSERT INTO cairn_agents (id, workspace_id, user_id, name, engine_version, status, token_generation, node, created_at,
          description, vibe, emoji, model)
        VALUES (${e.agentId}, ${e.workspaceId}, ${e.userId}, ${e.name}, ${e.engineVersion}, 'starting', 0, ${e.node ?? null}, ${e.at},
          ${e.description ?? null}, ${e.vibe ?? null}, ${e.emoji ?? null}, ${e.model ?? null})
        ON CONFLICT (id) DO NOTHING`,
    // Each field as the event has it: absent, unchanged.
    AgentProfileChanged: (sql, e) =>
      sql`UPDATE cairn_agents SET
        name = ${e.name === undefined ? sql`name` : e.name},
        description = ${e.description === undefined ? sql`description` : e.description},
        vibe = ${e.vibe === undefined ? sql`vibe` : e.vibe},
        emoji = ${e.emoji === undefined ? sql`emoji` : e.emoji},
        model = ${e.model === undefined ? sql`model` : e.model}
        WHERE id = ${e.agentId}`,
    AgentStarted: (sql, e) =>
      sql`UPDATE cairn_agents SET status = 'running', engine_version = ${e.engineVersion}, recovering = false,
        node = COALESCE(${e.node ?? null}, node) WHERE id = ${e.agentId}`,
    AgentFailedToStart: (sql, e) =>
      sql`UPDATE cairn_agents SET status = 'not_running', start_failure = ${e.logTail}, start_failure_at = ${e.at} WHERE id = ${e.agentId}`,
    AgentStopped: (sql, e) =>
      sql`UPDATE cairn_agents SET status = 'not_running', recovering = recovering OR ${e.reason !== "stopped"},
        last_stop_reason = ${e.reason}, last_stop_at = ${e.at} WHERE id = ${e.agentId}`,
    AgentRecoveryScheduled: (sql, e) => sql`UPDATE cairn_agents SET recovering = true WHERE id = ${e.agentId}`,
    AgentRestartRequested: (sql, e) => sql`UPDATE cairn_agents SET status = 'starting' WHERE id = ${e.agentId}`,
    AgentFellAsleep: (sql, e) =>
      sql`UPDATE cairn_agents SET status = 'sleeping', recovering = false, asleep_since = ${e.at}, wake_at = ${e.wakeAt ?? null}
        WHERE id = ${e.agentId}`,
    AgentWoken: (sql, e) => sql`UPDATE cairn_agents SET status = 'starting', wake_at = NULL WHERE id = ${e.agentId}`,
    GatewayTokenRotated: (sql, e) => sql`UPDATE cairn_agents SET token_generation = ${e.generation} WHERE id = ${e.agentId}`,
    AgentDeleted: (sql, e) => sql`DELETE FROM cairn_agents WHERE id = ${e.agentId}`
  }
})

interface Row {
  readonly id: string
  readonly workspace_id: string
  readonly user_id: string
  readonly name: string
  readonly description?: string | null
  readonly vibe?: string | null
  readonly emoji?: string | null
  readonly model?: string | null
  readonly engine_version: string
  readonly status: Agent.AgentStatus
  readonly token_generation: number
  readonly recovering: boolean
  readonly node: string | null
  readonly last_stop_reason?: string | null
  readonly last_stop_at?: Date | null
  readonly asleep_since?: Date | null
  readonly wake_at?: Date | null
  readonly start_failure?: string | null
  readonly start_failure_at?: Date | null
  readonly created_at: Date
  /** From the snapshots read model, where the query joins it. */
  readonly last_sync?: Date | null
  readonly snapshot_cid?: string | null
}

/** An agent as its row has it: everything but its secrets and skills (their own tables have those). */
export type AgentView = Omit<Agent.Agent, "secrets" | "skills"> & {
  /** Why and when its gateway last stopped (`oom`: at its memory cap); absent while it never has. */
  readonly lastStop?: { readonly reason: Agent.AgentStopped["reason"]; readonly at: string }
  /** While it sleeps: since when, and when Cairn wakes it by itself for a scheduled task (null: only on demand). */
  readonly asleep?: { readonly since: string; readonly wakeAt: string | null }
  /** While it is not running because its last start (or wake) failed: why, and when. */
  readonly startFailure?: { readonly reason: string; readonly at: string }
  /** When its workspace was last snapshotted, and that snapshot's CID (Pinata's `lastSync`, `snapshotCid`); absent: not read. */
  readonly snapshots?: { readonly lastSync: string | null; readonly snapshotCid: string | null }
}

/** A timestamp column as the API shows it (a driver may give a Date or its text). */
const iso = (date: Date) => new Date(date).toISOString()

const toAgent = (row: Row): AgentView => ({
  agentId: row.id,
  workspaceId: row.workspace_id,
  userId: row.user_id,
  name: row.name,
  description: row.description ?? null,
  vibe: row.vibe ?? null,
  emoji: row.emoji ?? null,
  model: row.model ?? null,
  engineVersion: row.engine_version,
  status: row.status,
  tokenGeneration: row.token_generation,
  recovering: row.recovering,
  node: row.node,
  createdAt: row.created_at.toISOString(),
  ...(row.last_stop_reason === undefined || row.last_stop_reason === null || row.last_stop_at === undefined ||
      row.last_stop_at === null
    ? {}
    : { lastStop: { reason: row.last_stop_reason as Agent.AgentStopped["reason"], at: iso(row.last_stop_at) } }),
  ...(row.status !== "sleeping" || row.asleep_since == null
    ? {}
    : { asleep: { since: iso(row.asleep_since), wakeAt: row.wake_at == null ? null : iso(row.wake_at) } }),
  ...(row.status !== "not_running" || row.recovering || row.start_failure == null || row.start_failure_at == null
    ? {}
    : { startFailure: { reason: row.start_failure, at: iso(row.start_failure_at) } }),
  ...(row.last_sync === undefined
    ? {}
    : { snapshots: { lastSync: row.last_sync === null ? null : iso(row.last_sync), snapshotCid: row.snapshot_cid ?? null } })
})

/** The queries the services make of it. */
export const queries = (sql: SqlClient.SqlClient) => {
  /** The agents a node supervises; agents recorded before nodes were named count as everyone's. */
  const onNode = (node: string) => sql`(node = ${node} OR node IS NULL)`
  /** An agent's row with its latest snapshot (snapshots read model): the time it was taken and its CID. */
  const withSnapshot = sql.literal(`cairn_agents.*, ss.last_sync,
      (SELECT s.cid FROM cairn_snapshots s WHERE s.agent_id = cairn_agents.id ORDER BY s.sequence DESC LIMIT 1) AS snapshot_cid
    FROM cairn_agents LEFT JOIN cairn_snapshot_streams ss ON ss.agent_id = cairn_agents.id`)
  const byId = (agentId: string) =>
    sql<Row>`SELECT * FROM cairn_agents WHERE id = ${agentId}`.pipe(
      Effect.orDie,
      Effect.map(([row]) => Option.map(Option.fromNullishOr(row), toAgent))
    )
  const withSnapshotById = (agentId: string) =>
    sql<Row>`SELECT ${withSnapshot} WHERE cairn_agents.id = ${agentId}`.pipe(
      Effect.orDie,
      Effect.map(([row]) => Option.map(Option.fromNullishOr(row), toAgent))
    )
  const visible = (found: Option.Option<AgentView>, workspaceId: string, agentId: string) =>
    Option.isSome(found) && found.value.workspaceId === workspaceId ? Effect.succeed(found.value) : Effect.fail(new Agent.AgentNotFound({ agentId }))
  return {
    byId,
    /** The agent, if `workspaceId` has it: another workspace's agent, or a deleted one, is not found. */
    visibleIn: (workspaceId: string, agentId: string) => Effect.flatMap(byId(agentId), (found) => visible(found, workspaceId, agentId)),
    /** `visibleIn`, with its latest snapshot: the agent as the API shows it (every other caller only checks it is there). */
    shownIn: (workspaceId: string, agentId: string) => Effect.flatMap(withSnapshotById(agentId), (found) => visible(found, workspaceId, agentId)),
    inWorkspace: (workspaceId: string) =>
      sql<Row>`SELECT ${withSnapshot} WHERE cairn_agents.workspace_id = ${workspaceId} ORDER BY cairn_agents.created_at, cairn_agents.id`.pipe(
        Effect.orDie,
        Effect.map((rows) => rows.map(toAgent))
      ),
    /** This node's agents that should have a gateway: starting, running, or recovering from a crash (not sleeping). */
    toResume: (node: string) =>
      sql<Row>`SELECT * FROM cairn_agents WHERE (status NOT IN ('not_running', 'sleeping') OR recovering) AND ${onNode(node)}`.pipe(
        Effect.orDie,
        Effect.map((rows) => rows.map(toAgent))
      ),
    runningOn: (node: string) =>
      sql<Row>`SELECT * FROM cairn_agents WHERE status = 'running' AND ${onNode(node)}`.pipe(
        Effect.orDie,
        Effect.map((rows) => rows.map(toAgent))
      ),
    /** This node's sleeping agents that Cairn wakes by itself at `before` or earlier (for a scheduled task). */
    dueToWake: (node: string, before: Date) =>
      sql<Row>`SELECT * FROM cairn_agents WHERE status = 'sleeping' AND wake_at <= ${before} AND ${onNode(node)}`.pipe(
        Effect.orDie,
        Effect.map((rows) => rows.map(toAgent))
      ),
    /** Which node runs each of these agents (null: unnamed); agents not listed were deleted. */
    owners: (agentIds: ReadonlyArray<string>) =>
      sql<{ id: string; node: string | null }>`SELECT id, node FROM cairn_agents WHERE id = ANY(${agentIds}::text[])`.pipe(
        Effect.orDie,
        Effect.map((rows) => new Map(rows.map((r) => [r.id, r.node])))
      )
  }
}
