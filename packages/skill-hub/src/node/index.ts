/**
 * The skill hub on Node: `LocalCatalog`, a catalog directory (`DATA_DIR/hub/`, the offline default), and
 * `SkillHubConfig`, which picks it or the ClawHub registry from configuration.
 */
export * as LocalCatalog from "./LocalCatalog.ts"
export * as SkillHubConfig from "./SkillHubConfig.ts"
