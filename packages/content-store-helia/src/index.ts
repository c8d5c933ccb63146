/** The ContentStore port on an embedded @helia/unixfs over filesystem or in-memory blockstores. */
export * as HeliaContentStore from "./HeliaContentStore.ts"
