/**
 * An agent's records, shared by the agents service and its supervisor: its event stream (append, load) and its row
 * in the `cairn_agents` read model.
 */
import { Agent } from "@cairn/domain"
import { type EventStore, ExpectedVersion } from "@cairn/event-store"
import { Effect, Option } from "effect"
import type { SqlClient } from "effect/sql"
import { encoder, load } from "./EventCodec.ts"

const encodeAgent = encoder(Agent.AgentEvent)

export interface AgentView extends Agent.Agent {}

export interface AgentRow {
  readonly id: string
  readonly workspace_id: string
  readonly user_id: string
  readonly name: string
  readonly engine_version: string
  readonly status: Agent.AgentStatus
  readonly token_generation: number
  readonly recovering: boolean
  readonly node: string | null
  readonly created_at: Date
}

export const toView = (row: AgentRow): AgentView => ({
  agentId: row.id,
  workspaceId: row.workspace_id,
  userId: row.user_id,
  name: row.name,
  engineVersion: row.engine_version,
  status: row.status,
  tokenGeneration: row.token_generation,
  recovering: row.recovering,
  node: row.node,
  createdAt: row.created_at.toISOString()
})

export const make = (store: EventStore["Service"], sql: SqlClient.SqlClient) => ({
  append: (agentId: string, events: ReadonlyArray<Agent.AgentEvent>, actor: string, expected = ExpectedVersion.StreamExists) =>
    store.append([{ stream: Agent.stream(agentId), expected, events: events.map((e) => encodeAgent(e, { actor })) }]),

  load: (agentId: string) => load(store, Agent.stream(agentId), Agent.AgentEvent, Agent.initial, Agent.evolve),

  row: (agentId: string) =>
    sql<AgentRow>`SELECT * FROM cairn_agents WHERE id = ${agentId}`.pipe(
      Effect.orDie,
      Effect.map(([r]) => Option.fromNullishOr(r).pipe(Option.map(toView)))
    )
})
