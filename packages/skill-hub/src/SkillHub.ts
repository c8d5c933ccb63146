/**
 * The skill hub port: a ClawHub-compatible registry of skills, searched, looked up and downloaded by slug.
 * Adapters: ClawHubRegistry (the HTTP protocol OpenClaw's own installer speaks, at `CLAWHUB_URL`) and LocalCatalog
 * (a catalog directory on disk, the offline default). A downloaded bundle is already unpacked and checked
 * (Archive.ts): relative paths only, no links, within the size limits.
 */
import { Context, type Effect, Schema } from "effect"
import type { ValidationFailed } from "@cairn/domain"

export interface HubSkill {
  readonly slug: string
  /** The registry's display name. */
  readonly name: string
  readonly summary: string
  /** The newest version, a semver string chosen by the registry. */
  readonly version: string
  readonly owner: string | null
  readonly category: string | null
  readonly tags: ReadonlyArray<string>
  readonly installs: number
  readonly featured: boolean
  readonly createdAt: string
  readonly updatedAt: string
  /** Every version, newest first: given by `get` (a listing leaves it out). */
  readonly versions?: ReadonlyArray<HubVersion>
}

/** One published version of a hub skill. */
export interface HubVersion {
  readonly version: string
  readonly createdAt: string
  /** The publisher's notes for the version; empty when it wrote none. */
  readonly changelog: string
}

export interface HubQuery {
  readonly q?: string
  readonly category?: string
  readonly sort?: "popular" | "newest" | "name"
  /** Opaque: the `nextCursor` of the page before. */
  readonly cursor?: string
  /** 20 unless given, at most 100 (`pageSize`). */
  readonly limit?: number
}

/** A query's page size: 20 unless asked, at most 100. */
export const pageSize = (limit: number | undefined) =>
  limit === undefined || !Number.isFinite(limit) ? 20 : Math.min(100, Math.max(1, Math.floor(limit)))

export interface HubPage {
  readonly skills: ReadonlyArray<HubSkill>
  readonly nextCursor: string | null
}

export interface BundleFile {
  readonly path: string
  readonly content: Uint8Array
}

/** A skill version as downloaded: its files, `SKILL.md` at the root. */
export interface HubBundle {
  readonly slug: string
  readonly version: string
  readonly files: ReadonlyArray<BundleFile>
}

/** The registry has no such skill, or no such version of it. */
export class HubSkillNotFound extends Schema.TaggedError<HubSkillNotFound>()("HubSkillNotFound", {
  slug: Schema.String,
  version: Schema.optionalKey(Schema.String)
}) {
  readonly status = 404
  override get message() {
    return this.version === undefined
      ? `Skill ${this.slug} not found on the hub`
      : `Skill ${this.slug} has no version ${this.version} on the hub`
  }
}

/** The registry could not be reached or answered with something other than the protocol. */
export class SkillHubUnavailable extends Schema.TaggedError<SkillHubUnavailable>()("SkillHubUnavailable", {
  registry: Schema.String,
  cause: Schema.Defect()
}) {
  readonly status = 503
  readonly unavailable = true
  override get message() {
    return `Skill hub unavailable: ${this.registry} could not be reached`
  }
}

export class SkillHub extends Context.Service<SkillHub, {
  /** Where skills come from, for messages and records (`https://clawhub.ai`, `file:///data/hub`). */
  readonly registry: string
  readonly search: (query: HubQuery) => Effect.Effect<HubPage, SkillHubUnavailable>
  readonly get: (slug: string) => Effect.Effect<HubSkill, HubSkillNotFound | SkillHubUnavailable>
  /** Downloads and unpacks a version (the newest when omitted); a bad bundle is ValidationFailed. */
  readonly download: (
    slug: string,
    version?: string
  ) => Effect.Effect<HubBundle, HubSkillNotFound | SkillHubUnavailable | ValidationFailed>
}>()("cairn/SkillHub") {}
