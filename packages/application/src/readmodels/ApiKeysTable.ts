/**
 * `cairn_api_keys`: one row per issued key, revoked or not, so authenticating a request is one lookup rather than
 * a read of the key's stream, and a workspace's keys can be listed (`/v3/pinata/keys`) with their names, use limits
 * and uses. A deleted workspace's keys are revoked with it. Never a secret: the JWT is not kept, and a
 * self-service key's `pinata_api_secret` only as its hash, on the key's stream.
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
      expires_at timestamptz, revoked_at timestamptz, created_at timestamptz NOT NULL)`.pipe(
      // Added with self-service keys (`/v3/pinata/keys`). Keys recorded before have no name, use limit or uses, so
      // these defaults are what a rebuild from the log gives them too.
      Effect.andThen(sql`ALTER TABLE cairn_api_keys ADD COLUMN IF NOT EXISTS name text NOT NULL DEFAULT ''`),
      Effect.andThen(sql`ALTER TABLE cairn_api_keys ADD COLUMN IF NOT EXISTS max_uses int`),
      Effect.andThen(sql`ALTER TABLE cairn_api_keys ADD COLUMN IF NOT EXISTS uses int NOT NULL DEFAULT 0`),
      Effect.andThen(sql`ALTER TABLE cairn_api_keys ADD COLUMN IF NOT EXISTS last_used_at timestamptz`),
      Effect.andThen(sql`CREATE INDEX IF NOT EXISTS cairn_api_keys_workspace ON cairn_api_keys (workspace_id, created_at)`),
      // Added with key-pair authentication (the legacy SDK's pinata_api_key and pinata_secret_api_key headers): the
      // SHA-256 of a self-service key's secret, as its ApiKeyIssued event has it.
      Effect.andThen(sql`ALTER TABLE cairn_api_keys ADD COLUMN IF NOT EXISTS secret_hash text`)
    ),
  on: {
    ApiKeyIssued: (sql, e) =>
      sql`INSERT INTO cairn_api_keys (key_id, workspace_id, user_id, scopes, expires_at, created_at, name, max_uses, secret_hash)
        VALUES (${e.keyId}, ${e.workspaceId}, ${e.userId}, ${[...e.scopes]}::text[], ${e.expiresAt}, ${e.at},
          ${e.name ?? ""}, ${e.maxUses ?? null}, ${e.secretHash ?? null})
        ON CONFLICT (key_id) DO NOTHING`,
    ApiKeyUsed: (sql, e) => sql`UPDATE cairn_api_keys SET uses = uses + 1, last_used_at = ${e.at} WHERE key_id = ${e.keyId}`,
    ApiKeyRevoked: (sql, e) => sql`UPDATE cairn_api_keys SET revoked_at = ${e.at} WHERE key_id = ${e.keyId}`,
    WorkspaceDeleted: (sql, e) =>
      sql`UPDATE cairn_api_keys SET revoked_at = ${e.at} WHERE workspace_id = ${e.workspaceId} AND revoked_at IS NULL`
  }
})

/**
 * What authentication needs of a key besides its JWT: whose it is, whether it was revoked, and whether it has a use
 * limit (then each request is counted on its stream, which says whether one is left).
 */
export interface KeyStanding {
  readonly workspaceId: string
  readonly revoked: boolean
  readonly limited: boolean
}

/** A key as `/v3/pinata/keys` lists it. */
export interface KeyView {
  readonly keyId: string
  readonly name: string
  readonly userId: string
  readonly scopes: ReadonlyArray<string>
  readonly maxUses: number | null
  readonly uses: number
  readonly revoked: boolean
  readonly expiresAt: string | null
  readonly createdAt: string
  readonly updatedAt: string
}

/** One page of a workspace's keys, newest first; every filter left out matches all keys. */
export interface PageQuery {
  readonly workspaceId: string
  /** A part of the name, matched without regard to case. */
  readonly name?: string
  readonly revoked?: boolean
  /** Keys with a use limit (true) or without one (false). */
  readonly limitedUse?: boolean
  /** Keys with a use limit that are spent (true), or that are not (false). */
  readonly exhausted?: boolean
  readonly offset: number
  readonly limit: number
}

interface Row {
  readonly key_id: string
  readonly name: string
  readonly user_id: string
  readonly scopes: ReadonlyArray<string>
  readonly max_uses: number | null
  readonly uses: number
  readonly revoked_at: Date | null
  readonly expires_at: Date | null
  readonly created_at: Date
  /** The key's last change: its creation, last use or revocation. */
  readonly updated_at: Date
}

const toView = (row: Row): KeyView => ({
  keyId: row.key_id,
  name: row.name,
  userId: row.user_id,
  scopes: row.scopes,
  maxUses: row.max_uses,
  uses: row.uses,
  revoked: row.revoked_at !== null,
  expiresAt: row.expires_at === null ? null : row.expires_at.toISOString(),
  createdAt: row.created_at.toISOString(),
  updatedAt: row.updated_at.toISOString()
})

/** The queries the services make of it. */
export const queries = (sql: SqlClient.SqlClient) => ({
  standing: (keyId: string) =>
    sql<{ readonly workspace_id: string; readonly revoked_at: Date | null; readonly max_uses: number | null }>`
      SELECT workspace_id, revoked_at, max_uses FROM cairn_api_keys WHERE key_id = ${keyId}`.pipe(
      Effect.orDie,
      Effect.map(([row]) =>
        Option.map(Option.fromNullishOr(row), (row): KeyStanding => ({
          workspaceId: row.workspace_id,
          revoked: row.revoked_at !== null,
          limited: row.max_uses !== null
        }))
      )
    ),

  /** What a key pair is checked against: the key's claims, its secret's hash and its expiry; none for a key without a secret. */
  pair: (keyId: string) =>
    sql<{ readonly workspace_id: string; readonly user_id: string; readonly scopes: ReadonlyArray<string>; readonly secret_hash: string; readonly expires_at: Date | null }>`
      SELECT workspace_id, user_id, scopes, secret_hash, expires_at FROM cairn_api_keys
      WHERE key_id = ${keyId} AND secret_hash IS NOT NULL`.pipe(
      Effect.orDie,
      Effect.map(([row]) =>
        Option.map(Option.fromNullishOr(row), (row) => ({
          claims: { keyId, workspaceId: row.workspace_id, userId: row.user_id, scopes: [...row.scopes] },
          secretHash: row.secret_hash,
          expiresAt: row.expires_at
        }))
      )
    ),

  /** A page of the workspace's keys and how many match the filters in all. */
  page: (query: PageQuery) => {
    const conditions = [
      sql`workspace_id = ${query.workspaceId}`,
      ...(query.name === undefined ? [] : [sql`name ILIKE ${ReadModel.containing(query.name)}`]),
      ...(query.revoked === undefined ? [] : [query.revoked ? sql`revoked_at IS NOT NULL` : sql`revoked_at IS NULL`]),
      ...(query.limitedUse === undefined ? [] : [query.limitedUse ? sql`max_uses IS NOT NULL` : sql`max_uses IS NULL`]),
      ...(query.exhausted === undefined
        ? []
        : [query.exhausted ? sql`max_uses IS NOT NULL AND uses >= max_uses` : sql`(max_uses IS NULL OR uses < max_uses)`])
    ]
    return Effect.all({
      keys: sql<Row>`SELECT key_id, name, user_id, scopes, max_uses, uses, revoked_at, expires_at, created_at,
          greatest(created_at, last_used_at, revoked_at) AS updated_at FROM cairn_api_keys WHERE ${sql.and(conditions)}
        ORDER BY created_at DESC, key_id DESC LIMIT ${query.limit} OFFSET ${query.offset}`,
      count: sql<{ readonly count: number | bigint | string }>`SELECT count(*) AS count FROM cairn_api_keys WHERE ${sql.and(conditions)}`
    }).pipe(
      Effect.orDie,
      Effect.map(({ keys, count }) => ({ keys: keys.map(toView), count: Number(count[0]?.count ?? 0) }))
    )
  }
})
