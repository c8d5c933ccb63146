/** Application services: load a stream, decide with the domain, append; and the read models they query. */
export * from "./Access.ts"
export * from "./Agents.ts"
export * from "./ApiKeys.ts"
export * as EventCodec from "./EventCodec.ts"
export * from "./Files.ts"
export * as ReadModelTables from "./readmodels/Tables.ts"
export * from "./Signatures.ts"
export * from "./Workspaces.ts"
