/**
 * The ClawHub registry protocol's JSON bodies as Cairn reads them (clawhub `docs/http-api.md` and
 * `packages/clawhub/src/schema/schemas.ts`; OpenClaw `src/infra/clawhub.ts`), and their mapping to HubSkill. The
 * schemas are lenient: only the fields Cairn uses are declared, and loose fields (`tags`, `stats`, `topics`) are read
 * defensively, so a registry adding fields never breaks a client. ClawHub's `tags` is a map of dist-tags
 * (`{latest: "1.2.3"}`), so HubSkill's topical tags come from `topics`; `category` is the first topic unless the
 * registry sends a `category` (Cairn's RegistryServer does).
 */
import { Schema } from "effect"
// semver's functions one by one: its index loads ~45 modules at every start.
import valid from "semver/functions/valid.js"
import rcompare from "semver/functions/rcompare.js"
import type { HubSkill, HubVersion } from "./SkillHub.ts"

/** ClawHub sends epoch milliseconds; other registries may send ISO strings. */
const Timestamp = Schema.Union([Schema.Number, Schema.String])

const LatestVersion = Schema.Struct({
  version: Schema.String,
  createdAt: Schema.optionalKey(Timestamp),
  changelog: Schema.optionalKey(Schema.NullOr(Schema.String))
})

const Owner = Schema.Struct({ handle: Schema.optionalKey(Schema.NullOr(Schema.String)) })

const SkillFields = {
  slug: Schema.String,
  displayName: Schema.String,
  summary: Schema.optionalKey(Schema.NullOr(Schema.String)),
  topics: Schema.optionalKey(Schema.Unknown),
  tags: Schema.optionalKey(Schema.Unknown),
  stats: Schema.optionalKey(Schema.Unknown),
  category: Schema.optionalKey(Schema.Unknown),
  featured: Schema.optionalKey(Schema.Unknown),
  createdAt: Schema.optionalKey(Timestamp),
  updatedAt: Schema.optionalKey(Timestamp)
}

/** `GET /api/v1/skills/<slug>` */
export const Detail = Schema.Struct({
  skill: Schema.NullOr(Schema.Struct(SkillFields)),
  latestVersion: Schema.optionalKey(Schema.NullOr(LatestVersion)),
  owner: Schema.optionalKey(Schema.NullOr(Owner))
})

/** `GET /api/v1/skills?sort=&cursor=&limit=` */
export const List = Schema.Struct({
  items: Schema.Array(Schema.Struct({
    ...SkillFields,
    latestVersion: Schema.optionalKey(Schema.NullOr(LatestVersion)),
    owner: Schema.optionalKey(Schema.NullOr(Owner)),
    ownerHandle: Schema.optionalKey(Schema.NullOr(Schema.String))
  })),
  nextCursor: Schema.optionalKey(Schema.NullOr(Schema.String))
})

/** `GET /api/v1/search?q=&limit=` */
export const Search = Schema.Struct({
  results: Schema.Array(Schema.Struct({
    slug: Schema.optionalKey(Schema.NullOr(Schema.String)),
    source: Schema.optionalKey(Schema.Unknown),
    displayName: Schema.optionalKey(Schema.NullOr(Schema.String)),
    summary: Schema.optionalKey(Schema.NullOr(Schema.String)),
    version: Schema.optionalKey(Schema.NullOr(Schema.String)),
    updatedAt: Schema.optionalKey(Timestamp),
    ownerHandle: Schema.optionalKey(Schema.NullOr(Schema.String)),
    owner: Schema.optionalKey(Schema.NullOr(Owner)),
    downloads: Schema.optionalKey(Schema.Unknown),
    featured: Schema.optionalKey(Schema.Unknown)
  }))
})

/** `GET /api/v1/skills/<slug>/versions` */
export const Versions = Schema.Struct({
  items: Schema.Array(LatestVersion),
  nextCursor: Schema.optionalKey(Schema.NullOr(Schema.String))
})

/** `POST /api/v1/skills/-/security-verdicts` */
export const Verdicts = Schema.Struct({
  items: Schema.Array(Schema.Struct({
    decision: Schema.String,
    reasons: Schema.optionalKey(Schema.Array(Schema.String)),
    error: Schema.optionalKey(Schema.Unknown)
  }))
})

const iso = (value: typeof Timestamp.Type | undefined, fallback: string) => {
  if (value === undefined) return fallback
  const time = typeof value === "number" ? value : Date.parse(value)
  return Number.isFinite(time) ? new Date(time).toISOString() : fallback
}

const EPOCH = new Date(0).toISOString()

const record = (value: unknown): Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? value as Record<string, unknown> : {}

const strings = (value: unknown): ReadonlyArray<string> =>
  Array.isArray(value) ? value.filter((item): item is string => typeof item === "string") : []

/** Installs, whichever counter the registry keeps (ClawHub: `installsAllTime`, `installsCurrent`, `downloads`). */
const installsOf = (stats: unknown, fallback?: unknown) => {
  const counters = record(stats)
  for (const value of [counters["installsAllTime"], counters["installs"], counters["installsCurrent"], counters["downloads"], fallback]) {
    if (typeof value === "number" && Number.isFinite(value) && value >= 0) return Math.floor(value)
  }
  return 0
}

type SkillCore = Schema.Struct.Type<typeof SkillFields>

/** A detail or listing item as a HubSkill; undefined when the registry has no hosted version of it to download. */
export const toSkill = (
  core: SkillCore,
  latest: typeof LatestVersion.Type | null | undefined,
  owner: string | null | undefined
): HubSkill | undefined => {
  if (latest === null || latest === undefined) return undefined
  const topics = strings(core.topics).length > 0 ? strings(core.topics) : strings(core.tags)
  const updatedAt = iso(core.updatedAt, iso(latest.createdAt, EPOCH))
  return {
    slug: core.slug,
    name: core.displayName.trim() === "" ? core.slug : core.displayName,
    summary: core.summary ?? "",
    version: latest.version,
    owner: owner ?? null,
    category: typeof core.category === "string" ? core.category : topics[0] ?? null,
    tags: topics,
    installs: installsOf(core.stats),
    featured: core.featured === true,
    createdAt: iso(core.createdAt, updatedAt),
    updatedAt
  }
}

/** A search result as a HubSkill; ClawHub's search carries no topics, stats or creation time. */
export const searchResultToSkill = (result: typeof Search.Type["results"][number]): HubSkill | undefined => {
  // skills.sh results (and any without a slug or a hosted version) cannot be downloaded from the registry.
  if (result.source !== undefined && result.source !== "clawhub") return undefined
  if (typeof result.slug !== "string" || typeof result.version !== "string") return undefined
  const updatedAt = iso(result.updatedAt, EPOCH)
  return {
    slug: result.slug,
    name: result.displayName ?? result.slug,
    summary: result.summary ?? "",
    version: result.version,
    owner: result.ownerHandle ?? result.owner?.handle ?? null,
    category: null,
    tags: [],
    installs: installsOf(undefined, result.downloads),
    featured: result.featured === true,
    createdAt: updatedAt,
    updatedAt
  }
}

/** The version history, newest first by semver (registry order where a version is not semver). */
export const toVersions = (items: typeof Versions.Type["items"]): ReadonlyArray<HubVersion> =>
  items
    .map((item) => ({ version: item.version, createdAt: iso(item.createdAt, EPOCH), changelog: item.changelog ?? "" }))
    .sort((a, b) => (valid(a.version) && valid(b.version) ? rcompare(a.version, b.version) : 0))
