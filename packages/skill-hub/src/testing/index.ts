/** Test kits for the skill hub: `@cairn/skill-hub/testing`, a real ClawHub-compatible registry and catalog fixtures. */
export * from "./CatalogFixture.ts"
export * as RegistryServer from "./RegistryServer.ts"
