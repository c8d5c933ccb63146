/** The ContentStore and SnapshotStore ports on Kubo nodes' RPC API. */
export * as KuboContentStore from "./KuboContentStore.ts"
export * as KuboSnapshotStore from "./KuboSnapshotStore.ts"
