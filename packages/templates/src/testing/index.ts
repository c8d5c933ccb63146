/** Test fixtures for templates: real git repositories and a loopback git server. `@cairn/templates/testing`. */
export * from "./GitFixtures.ts"
