/** Test kits for adapters of the ContentStore port: `@cairn/content-store/testing`. */
export * from "./ContentStoreContract.ts"
