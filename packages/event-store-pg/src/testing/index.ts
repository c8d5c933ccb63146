/** Test kits for the Postgres adapter: `@cairn/event-store-pg/testing`. */
export * from "./OpenAppend.ts"
export * from "./TestDatabase.ts"
