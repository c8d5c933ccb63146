/**
 * What happens to a catalog template (stream `template-<id>`): it is published from a folder stored as one IPFS
 * directory (its snapshot), gets new versions when its folder changes, and is archived. Each version carries what
 * the catalog lists, read off the folder's manifest when it was published, so lists never open the snapshot.
 */
import { Schema } from "effect"

/** `public`: every workspace sees it (shipped and admin-published templates); `workspace`: only its publisher's. */
export const Visibility = Schema.Literals(["public", "workspace"])
export type Visibility = typeof Visibility.Type

/** Who published it: a workspace through the API, an operator through the admin API, or Cairn's shipped catalog. */
export const Publisher = Schema.Literals(["workspace", "admin", "cairn"])
export type Publisher = typeof Publisher.Type

/** A secret the template's agents need (manifest `secrets`), as the catalog lists it. */
export const RequiredSecret = Schema.Struct({
  name: Schema.String,
  description: Schema.NullOr(Schema.String),
  guideUrl: Schema.NullOr(Schema.String),
  required: Schema.Boolean
})
export type RequiredSecret = typeof RequiredSecret.Type

/** A skill the template brings (manifest `skills`): a stored folder by CID, or a ClawHub slug. */
export const IncludedSkill = Schema.Struct({
  name: Schema.String,
  cid: Schema.optionalKey(Schema.String),
  clawhubSlug: Schema.optionalKey(Schema.String)
})
export type IncludedSkill = typeof IncludedSkill.Type

/** One version of a template: its folder's CID, its manifest as published, and what the catalog shows of it. */
export const versionFields = {
  name: Schema.String,
  description: Schema.String,
  category: Schema.String,
  tags: Schema.Array(Schema.String),
  /** The template folder, manifest.json included, as one UnixFS directory on the public network. */
  snapshotCid: Schema.String,
  /** manifest.json as published (valid manifest v1 JSON). */
  manifest: Schema.Unknown,
  requiredSecrets: Schema.Array(RequiredSecret),
  includedSkills: Schema.Array(IncludedSkill),
  openclawVersion: Schema.NullOr(Schema.String),
  /** Where the folder came from, for a template published from git (a re-pull reads the same place). */
  gitUrl: Schema.optionalKey(Schema.String),
  gitRef: Schema.optionalKey(Schema.String),
  gitPath: Schema.optionalKey(Schema.String),
  gitCommitSha: Schema.optionalKey(Schema.String)
}

export class TemplatePublished extends Schema.TaggedClass<TemplatePublished>()("TemplatePublished", {
  templateId: Schema.String,
  /** Unique across the catalog, for good (reservation `template-slug-<slug>`). */
  slug: Schema.String,
  ...versionFields,
  visibility: Visibility,
  featured: Schema.Boolean,
  publisher: Publisher,
  /** The publishing workspace; null for admin and shipped templates. */
  workspaceId: Schema.NullOr(Schema.String),
  userId: Schema.String,
  at: Schema.String
}) {}

/** A new version: the folder (or the name or featured flag) changed. `version` counts from 1, the first publish. */
export class TemplateUpdated extends Schema.TaggedClass<TemplateUpdated>()("TemplateUpdated", {
  templateId: Schema.String,
  version: Schema.Int,
  ...versionFields,
  featured: Schema.Boolean,
  userId: Schema.String,
  at: Schema.String
}) {}

/** Taken out of the catalog: no longer listed, found or used for new agents. Its slug stays taken. */
export class TemplateArchived extends Schema.TaggedClass<TemplateArchived>()("TemplateArchived", {
  templateId: Schema.String,
  slug: Schema.String,
  userId: Schema.String,
  at: Schema.String
}) {}

export const TemplateEvent = Schema.Union([TemplatePublished, TemplateUpdated, TemplateArchived])
export type TemplateEvent = typeof TemplateEvent.Type
