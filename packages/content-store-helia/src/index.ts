/** The ContentStore and SnapshotStore ports on an embedded @helia/unixfs over filesystem or in-memory blockstores; FsBlocks, the filesystem blockstore they keep blocks in. */
export * as HeliaContentStore from "./HeliaContentStore.ts"
export * as HeliaSnapshotStore from "./HeliaSnapshotStore.ts"
export * as FsBlocks from "./FsBlocks.ts"
