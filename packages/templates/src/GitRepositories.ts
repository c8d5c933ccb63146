/**
 * The git port: a template folder read from a git repository at a branch, tag or commit, as the files of that
 * commit's tree under a path (real git objects, never a working tree), with the commit's id. Adapter:
 * `IsomorphicGitRepositories` (`@cairn/templates/node`). Who may name a repository on this machine or its networks
 * is the caller's decision, passed as `allowLocal`.
 */
import { Context, type Effect, Schema } from "effect"
import type { TemplateFile } from "./Validate.ts"

export interface GitSource {
  readonly gitUrl: string
  /** A branch name; ignored when `ref` is given. */
  readonly branch?: string
  /** A full ref (`refs/heads/main`, `refs/tags/v1`), a short branch or tag name, or a commit id. HEAD when neither is given. */
  readonly ref?: string
  /** The template's folder inside the repository; its root when left out. */
  readonly path?: string
}

export interface FetchOptions {
  /**
   * Whether the URL may name this machine: a local path or `file://` URL, or a host that is (or resolves to) a
   * loopback, private or link-local address. Only trusted callers (an admin, a configured installation) set it.
   */
  readonly allowLocal: boolean
}

export interface FetchedTemplate {
  readonly files: ReadonlyArray<TemplateFile>
  /** The commit the files were read from. */
  readonly commitSha: string
}

/** The repository could not be read: a bad URL, an unknown ref or path, a refused location, a transfer failure. */
export class GitFetchFailed extends Schema.TaggedError<GitFetchFailed>()("GitFetchFailed", {
  gitUrl: Schema.String,
  reason: Schema.String
}) {
  override get message() {
    return `could not read ${this.gitUrl}: ${this.reason}`
  }
}

/** A repository's branches and tags, by short name, sorted. */
export interface RepositoryRefs {
  readonly branches: ReadonlyArray<string>
  readonly tags: ReadonlyArray<string>
}

export class GitRepositories extends Context.Service<GitRepositories, {
  readonly fetch: (source: GitSource, options: FetchOptions) => Effect.Effect<FetchedTemplate, GitFetchFailed>
  /** What a repository offers to publish from, without fetching any of its objects. */
  readonly refs: (gitUrl: string, options: FetchOptions) => Effect.Effect<RepositoryRefs, GitFetchFailed>
}>()("cairn/GitRepositories") {}

/** Whether a git URL names something on this machine's disk (a path or `file://`), as opposed to a remote. */
export const isLocalUrl = (gitUrl: string) => gitUrl.startsWith("file:") || gitUrl.startsWith("/") || gitUrl.startsWith(".")
