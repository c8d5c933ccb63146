/** The ContentStore port on Kubo nodes' RPC API. */
export * as KuboContentStore from "./KuboContentStore.ts"
