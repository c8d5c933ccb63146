/**
 * `cairn_template_tasks`: the agents made from a template whose declared tasks are not created yet (a row from
 * `AgentCreated` with a template until `TemplateTasksCreated`, or its deletion), for the worker that creates them once
 * the agent's gateway runs (TemplateTasks.ts).
 */
import { Agent, ScheduledTask } from "@cairn/domain"
import { Effect, Schema } from "effect"
import type { SqlClient } from "effect/sql"
import * as ReadModel from "./ReadModel.ts"

export const projection = ReadModel.make({
  name: "template-tasks",
  events: Schema.Union([Agent.AgentCreated, Agent.AgentDeleted, ScheduledTask.TemplateTasksCreated]),
  tables: ["cairn_template_tasks"],
  setup: (sql) =>
    sql`CREATE TABLE IF NOT EXISTS cairn_template_tasks (
      agent_id text PRIMARY KEY, workspace_id text NOT NULL, user_id text NOT NULL, template_id text NOT NULL,
      snapshot_cid text NOT NULL, created_at timestamptz NOT NULL)`,
  on: {
    AgentCreated: (sql, e) =>
      e.template === undefined
        ? Effect.void
        : sql`INSERT INTO cairn_template_tasks (agent_id, workspace_id, user_id, template_id, snapshot_cid, created_at)
            VALUES (${e.agentId}, ${e.workspaceId}, ${e.userId}, ${e.template.templateId}, ${e.template.snapshotCid}, ${e.at})
            ON CONFLICT (agent_id) DO NOTHING`,
    TemplateTasksCreated: (sql, e) => sql`DELETE FROM cairn_template_tasks WHERE agent_id = ${e.agentId}`,
    AgentDeleted: (sql, e) => sql`DELETE FROM cairn_template_tasks WHERE agent_id = ${e.agentId}`
  }
})

/** An agent whose template's tasks are still to be created. */
export interface PendingTemplateTasks {
  readonly agentId: string
  readonly workspaceId: string
  readonly userId: string
  readonly templateId: string
  readonly snapshotCid: string
}

/** The queries the services make of it. */
export const queries = (sql: SqlClient.SqlClient) => ({
  /** Every agent whose template's tasks are still to be created, oldest first (a handful: each waits only until it runs). */
  pending: sql<{ agent_id: string; workspace_id: string; user_id: string; template_id: string; snapshot_cid: string }>`
    SELECT agent_id, workspace_id, user_id, template_id, snapshot_cid FROM cairn_template_tasks ORDER BY created_at, agent_id`.pipe(
    Effect.orDie,
    Effect.map((rows) =>
      rows.map((r): PendingTemplateTasks => ({
        agentId: r.agent_id,
        workspaceId: r.workspace_id,
        userId: r.user_id,
        templateId: r.template_id,
        snapshotCid: r.snapshot_cid
      }))
    )
  )
})
