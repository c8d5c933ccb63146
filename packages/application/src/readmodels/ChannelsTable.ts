/**
 * `cairn_channels`: one row per configured channel of each agent, with what `GET …/channels` shows (enabled, DM
 * policy, allow list, whether each token is set and its hint); never a token nor its ciphertext. Rows go with their
 * channel's removal and with their agent.
 */
import { Agent, Channel } from "@cairn/domain"
import { Effect, Schema } from "effect"
import type { SqlClient } from "effect/sql"
import * as ReadModel from "./ReadModel.ts"

export const projection = ReadModel.make({
  name: "channels",
  events: Schema.Union([Channel.ChannelEvent, Agent.AgentEvent]),
  tables: ["cairn_channels"],
  setup: (sql) =>
    sql`CREATE TABLE IF NOT EXISTS cairn_channels (
      agent_id text NOT NULL, channel text NOT NULL, enabled boolean NOT NULL, dm_policy text NOT NULL, allow_from text NOT NULL,
      bot_token_set boolean NOT NULL, bot_token_hint text, app_token_set boolean NOT NULL, app_token_hint text,
      updated_at timestamptz NOT NULL, PRIMARY KEY (agent_id, channel))`,
  on: {
    ChannelConfigured: (sql, e) => {
      const row = {
        enabled: e.settings.enabled,
        dmPolicy: e.settings.dmPolicy,
        allowFrom: JSON.stringify(e.settings.allowFrom),
        botSet: e.settings.botToken !== undefined,
        botHint: e.settings.botToken?.hint ?? null,
        appSet: e.settings.appToken !== undefined,
        appHint: e.settings.appToken?.hint ?? null
      }
      return sql`INSERT INTO cairn_channels (agent_id, channel, enabled, dm_policy, allow_from, bot_token_set, bot_token_hint, app_token_set,
          app_token_hint, updated_at)
        VALUES (${e.agentId}, ${e.channel}, ${row.enabled}, ${row.dmPolicy}, ${row.allowFrom}, ${row.botSet}, ${row.botHint}, ${row.appSet},
          ${row.appHint}, ${e.at})
        ON CONFLICT (agent_id, channel) DO UPDATE SET enabled = ${row.enabled}, dm_policy = ${row.dmPolicy}, allow_from = ${row.allowFrom},
          bot_token_set = ${row.botSet}, bot_token_hint = ${row.botHint}, app_token_set = ${row.appSet}, app_token_hint = ${row.appHint},
          updated_at = ${e.at}`
    },
    ChannelRemoved: (sql, e) => sql`DELETE FROM cairn_channels WHERE agent_id = ${e.agentId} AND channel = ${e.channel}`,
    AgentDeleted: (sql, e) => sql`DELETE FROM cairn_channels WHERE agent_id = ${e.agentId}`
  }
})

/** A configured channel as the read model has it. */
export interface ChannelRow {
  readonly channel: Channel.ChannelName
  readonly enabled: boolean
  readonly dmPolicy: Channel.DmPolicy
  readonly allowFrom: ReadonlyArray<string>
  readonly botTokenSet: boolean
  readonly botTokenHint: string | null
  readonly appTokenSet: boolean
  readonly appTokenHint: string | null
  readonly updatedAt: string
}

interface Row {
  readonly channel: Channel.ChannelName
  readonly enabled: boolean
  readonly dm_policy: Channel.DmPolicy
  readonly allow_from: string
  readonly bot_token_set: boolean
  readonly bot_token_hint: string | null
  readonly app_token_set: boolean
  readonly app_token_hint: string | null
  readonly updated_at: Date
}

export const queries = (sql: SqlClient.SqlClient) => ({
  /** The agent's configured channels. */
  ofAgent: (agentId: string) =>
    sql<Row>`SELECT channel, enabled, dm_policy, allow_from, bot_token_set, bot_token_hint, app_token_set, app_token_hint, updated_at
      FROM cairn_channels WHERE agent_id = ${agentId} ORDER BY channel`.pipe(
      Effect.orDie,
      Effect.map((rows) =>
        rows.map((row): ChannelRow => ({
          channel: row.channel,
          enabled: row.enabled,
          dmPolicy: row.dm_policy,
          allowFrom: JSON.parse(row.allow_from) as ReadonlyArray<string>,
          botTokenSet: row.bot_token_set,
          botTokenHint: row.bot_token_hint,
          appTokenSet: row.app_token_set,
          appTokenHint: row.app_token_hint,
          updatedAt: new Date(row.updated_at).toISOString()
        }))
      )
    )
})
