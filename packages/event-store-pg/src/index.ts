/** The Postgres adapters: the event store, its schema, and the database layers (server or embedded PGlite). */
export * as DataDirLock from "./DataDirLock.ts"
export * as EventStoreSchema from "./EventStoreSchema.ts"
export * as PgDatabase from "./PgDatabase.ts"
export * as PgEventStore from "./PgEventStore.ts"
export * as ProjectionCheck from "./ProjectionCheck.ts"
export * as PgStoreMetrics from "./PgStoreMetrics.ts"
export * as CategoryStats from "./CategoryStats.ts"
