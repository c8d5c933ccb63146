/**
 * The skill hub port, the archive reader skill bundles go through, and the ClawHub registry adapter (the ClawHub
 * protocol over `fetch`, so it runs on Node, Bun and Deno). The catalog on disk (`LocalCatalog`) and the choice
 * between the two (`SkillHubConfig`) are `@cairn/skill-hub/node`.
 */
export * as Archive from "./Archive.ts"
export * as BundleRules from "./BundleRules.ts"
export * as ClawHubRegistry from "./ClawHubRegistry.ts"
export * from "./SkillHub.ts"
