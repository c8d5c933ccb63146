/**
 * The content store ports (`ContentStore`, `SnapshotStore`) and the errors their callers may handle, and what uploads
 * hand a store (held pieces, staged leaves); no `node:` modules, so it runs on Node, Bun and Deno. Adapters live in
 * their own packages; staging on disk (`LeafWriter`, its worker, the young-generation collector uploads pace) is
 * `@cairn/content-store/node`.
 */
export * from "./ContentStore.ts"
export * from "./HeldPieces.ts"
export * from "./PinSources.ts"
export * from "./SnapshotStore.ts"
export * from "./StagedLeaves.ts"
