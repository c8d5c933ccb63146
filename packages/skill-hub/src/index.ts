/** The skill hub port, its adapters, and the archive reader skill bundles go through. */
export * as Archive from "./Archive.ts"
export * as BundleRules from "./BundleRules.ts"
export * as ClawHubRegistry from "./ClawHubRegistry.ts"
export * as LocalCatalog from "./LocalCatalog.ts"
export * from "./SkillHub.ts"
export * as SkillHubConfig from "./SkillHubConfig.ts"
