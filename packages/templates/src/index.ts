/**
 * Agent templates: manifest v1 (its JSON Schema and types), the checks a template folder passes before it is
 * stored, and the git port a folder is read through. Runs anywhere; `@cairn/templates/node` has the Node adapters
 * (isomorphic-git, the shipped catalog on disk).
 */
export * from "./GitRepositories.ts"
export * from "./Manifest.ts"
export * as ManifestSchema from "./ManifestSchema.ts"
export * from "./Validate.ts"
