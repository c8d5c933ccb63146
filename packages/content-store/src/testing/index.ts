/** Test kits for adapters of the ContentStore and SnapshotStore ports: `@cairn/content-store/testing`. */
export * from "./ContentStoreContract.ts"
export * from "./SnapshotStoreContract.ts"
