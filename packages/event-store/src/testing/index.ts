/** Test kits for adapters of the EventStore port: `@cairn/event-store/testing`. */
export * from "./EventStoreContract.ts"
