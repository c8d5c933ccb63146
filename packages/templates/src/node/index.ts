/** The Node side of templates: git through isomorphic-git, and the catalog Cairn ships, read from disk. */
export * as Catalog from "./Catalog.ts"
export * as IsomorphicGitRepositories from "./IsomorphicGitRepositories.ts"
