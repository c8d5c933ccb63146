/**
 * Tables a service makes for itself at startup, outside the projections' setup (which the event store runs under its
 * own lock). Nodes starting together on one database (a cluster's, CI's test servers) take turns here: two
 * concurrent `CREATE TABLE IF NOT EXISTS` of one table fail in Postgres's catalog (`pg_type_typname_nsp_index`).
 */
import { Effect } from "effect"
import type { SqlClient } from "effect/sql"

/** The advisory lock every such setup holds for its transaction. */
const schemaSetupLock = 7305424613337028n

export const createTogether = <A, E, R>(sql: SqlClient.SqlClient, ddl: Effect.Effect<A, E, R>) =>
  sql.withTransaction(Effect.andThen(sql`SELECT pg_advisory_xact_lock(${schemaSetupLock})`, ddl))
