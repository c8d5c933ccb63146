/** The ContentStore and SnapshotStore ports on an embedded @helia/unixfs over filesystem or in-memory blockstores. */
export * as HeliaContentStore from "./HeliaContentStore.ts"
export * as HeliaSnapshotStore from "./HeliaSnapshotStore.ts"
