/**
 * `cairn_signatures`: the signature of each signed CID per network, for reading it back and for the gateway's
 * response header without reading the CID's stream.
 */
import { CidRecord, type Network } from "@cairn/domain"
import { Effect, Option } from "effect"
import type { SqlClient } from "effect/sql"
import type { KeyStanding } from "./ApiKeysTable.ts"
import * as ReadModel from "./ReadModel.ts"

export const projection = ReadModel.make({
  name: "signatures",
  events: CidRecord.CidEvent,
  tables: ["cairn_signatures"],
  setup: (sql) =>
    sql`CREATE TABLE IF NOT EXISTS cairn_signatures (
      network text NOT NULL, cid text NOT NULL, workspace_id text NOT NULL, address text NOT NULL,
      signature text NOT NULL, created_at timestamptz NOT NULL, PRIMARY KEY (network, cid))`,
  on: {
    SignatureAdded: (sql, e) =>
      sql`INSERT INTO cairn_signatures (network, cid, workspace_id, address, signature, created_at)
        VALUES (${e.network}, ${e.cid}, ${e.workspaceId}, ${e.address}, ${e.signature}, ${e.at})
        ON CONFLICT (network, cid) DO UPDATE SET workspace_id = excluded.workspace_id, address = excluded.address,
          signature = excluded.signature, created_at = excluded.created_at`,
    SignatureRemoved: (sql, e) => sql`DELETE FROM cairn_signatures WHERE network = ${e.network} AND cid = ${e.cid}`
  }
})

/** A CID's signature, with the workspace that signed it (a private CID's signature is only its workspace's). */
export interface StoredSignature {
  readonly signature: string
  readonly address: string
  readonly workspaceId: string
}

/**
 * Who signed a folder published for everyone (a skill version, a template): the wallet of the `/v3` signature its
 * CID carries on the public network. As a join for listings: `address AS signed_by` of the row whose CID is
 * `cidColumn`.
 */
export const publicSignerJoin = (sql: SqlClient.SqlClient, cidColumn: string) =>
  sql.literal(`LEFT JOIN cairn_signatures signer ON signer.network = 'public' AND signer.cid = ${cidColumn}`)

/** The queries the services make of it. */
export const queries = (sql: SqlClient.SqlClient) => ({
  /** Who signed a folder published for everyone (publicSignerJoin, for one CID); null when no one did. */
  publicSigner: (cid: string) =>
    sql<{ readonly address: string }>`SELECT address FROM cairn_signatures WHERE network = 'public' AND cid = ${cid}`.pipe(
      Effect.orDie,
      Effect.map(([row]) => row?.address ?? null)
    ),
  byCid: (network: Network, cid: string) =>
    sql<{ readonly signature: string; readonly address: string; readonly workspace_id: string }>`
      SELECT signature, address, workspace_id FROM cairn_signatures WHERE network = ${network} AND cid = ${cid}`.pipe(
      Effect.orDie,
      Effect.map(([row]) =>
        Option.map(Option.fromNullishOr(row), (row): StoredSignature => ({
          signature: row.signature,
          address: row.address,
          workspaceId: row.workspace_id
        }))
      )
    ),
  /**
   * `byCid`, and the standing of the caller's API key (ApiKeysTable's `standing`) read in the same statement: a
   * signature GET is one database round trip rather than two (docs/performance.md, bench:http). Always one row.
   */
  byCidWithKey: (keyId: string, network: Network, cid: string) =>
    sql<{
      readonly key_workspace_id: string | null
      readonly revoked: boolean | null
      readonly limited: boolean | null
      readonly signature: string | null
      readonly address: string | null
      readonly workspace_id: string | null
    }>`SELECT k.workspace_id AS key_workspace_id, k.revoked_at IS NOT NULL AS revoked,
        k.max_uses IS NOT NULL AS limited, s.signature, s.address, s.workspace_id
      FROM (SELECT 1) AS one
      LEFT JOIN cairn_api_keys k ON k.key_id = ${keyId}
      LEFT JOIN cairn_signatures s ON s.network = ${network} AND s.cid = ${cid}`.pipe(
      Effect.orDie,
      Effect.map(([row]) => ({
        standing: row === undefined || row.key_workspace_id === null
          ? Option.none<KeyStanding>()
          : Option.some<KeyStanding>({ workspaceId: row.key_workspace_id, revoked: row.revoked === true, limited: row.limited === true }),
        signature: row === undefined || row.signature === null
          ? Option.none<StoredSignature>()
          : Option.some<StoredSignature>({ signature: row.signature, address: row.address!, workspaceId: row.workspace_id! })
      }))
    )
})
