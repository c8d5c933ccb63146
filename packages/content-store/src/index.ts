/** The content store port and the errors its callers may handle. Adapters live in their own packages. */
export * from "./ContentStore.ts"
export * from "./HeldPieces.ts"
export * from "./SnapshotStore.ts"
export * from "./StagedLeaves.ts"
export * from "./YoungGenerationGc.ts"
export * from "./LeafWorker.ts"
