/** Cairn's pure core: schemas, events, decisions and the documented errors. No I/O; runs on Node, Bun and Deno. */
export * as ApiKey from "./keys/ApiKey.ts"
export * as CidRecord from "./cids/CidRecord.ts"
export * from "./Cid.ts"
export * from "./DocumentedError.ts"
export * as File from "./files/File.ts"
export * from "./Network.ts"
export * from "./ValidationFailed.ts"
export * as Workspace from "./workspaces/Workspace.ts"
