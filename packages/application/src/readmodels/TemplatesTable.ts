/**
 * `cairn_templates`: one row per template (archived ones kept, with their status), its current version as the
 * catalog shows it: lists with their filters and categories, and lookups by id and by slug. The manifest stays in
 * the event log and the snapshot; lists never need it.
 */
import { Template } from "@cairn/domain"
import { Effect, Option } from "effect"
import type { SqlClient } from "effect/sql"
import * as ReadModel from "./ReadModel.ts"
import { publicSignerJoin } from "./SignaturesTable.ts"

export const projection = ReadModel.make({
  name: "templates",
  events: Template.TemplateEvent,
  tables: ["cairn_templates"],
  setup: (sql) =>
    Effect.all([
      sql`CREATE TABLE IF NOT EXISTS cairn_templates (
        id text PRIMARY KEY, slug text NOT NULL, version int NOT NULL, name text NOT NULL, description text NOT NULL,
        category text NOT NULL, tags text NOT NULL, snapshot_cid text NOT NULL, openclaw_version text,
        required_secrets text NOT NULL, included_skills text NOT NULL, featured boolean NOT NULL, status text NOT NULL,
        visibility text NOT NULL, publisher text NOT NULL, workspace_id text, user_id text NOT NULL,
        git_url text, git_ref text, git_path text, git_commit_sha text,
        created_at timestamptz NOT NULL, updated_at timestamptz NOT NULL)`,
      sql`CREATE UNIQUE INDEX IF NOT EXISTS cairn_templates_slug ON cairn_templates (slug)`,
      sql`CREATE INDEX IF NOT EXISTS cairn_templates_workspace ON cairn_templates (workspace_id, created_at)`
    ]),
  on: {
    TemplatePublished: (sql, e) =>
      sql`INSERT INTO cairn_templates (id, slug, version, name, description, category, tags, snapshot_cid, openclaw_version,
          required_secrets, included_skills, featured, status, visibility, publisher, workspace_id, user_id,
          git_url, git_ref, git_path, git_commit_sha, created_at, updated_at)
        VALUES (${e.templateId}, ${e.slug}, 1, ${e.name}, ${e.description}, ${e.category}, ${JSON.stringify(e.tags)},
          ${e.snapshotCid}, ${e.openclawVersion}, ${JSON.stringify(e.requiredSecrets)}, ${JSON.stringify(e.includedSkills)},
          ${e.featured}, 'published', ${e.visibility}, ${e.publisher}, ${e.workspaceId}, ${e.userId},
          ${e.gitUrl ?? null}, ${e.gitRef ?? null}, ${e.gitPath ?? null}, ${e.gitCommitSha ?? null}, ${e.at}, ${e.at})
        ON CONFLICT (id) DO NOTHING`,
    TemplateUpdated: (sql, e) =>
      sql`UPDATE cairn_templates SET version = ${e.version}, name = ${e.name}, description = ${e.description},
          category = ${e.category}, tags = ${JSON.stringify(e.tags)}, snapshot_cid = ${e.snapshotCid},
          openclaw_version = ${e.openclawVersion}, required_secrets = ${JSON.stringify(e.requiredSecrets)},
          included_skills = ${JSON.stringify(e.includedSkills)}, featured = ${e.featured}, git_url = ${e.gitUrl ?? null},
          git_ref = ${e.gitRef ?? null}, git_path = ${e.gitPath ?? null}, git_commit_sha = ${e.gitCommitSha ?? null},
          updated_at = ${e.at}
        WHERE id = ${e.templateId}`,
    TemplateArchived: (sql, e) => sql`UPDATE cairn_templates SET status = 'archived', updated_at = ${e.at} WHERE id = ${e.templateId}`
  }
})

/** A template as the templates endpoints show it. */
export interface TemplateView {
  readonly templateId: string
  readonly name: string
  readonly slug: string
  readonly version: number
  readonly description: string
  readonly category: string
  readonly tags: ReadonlyArray<string>
  readonly snapshotCid: string
  readonly openclawVersion: string | null
  readonly requiredSecrets: ReadonlyArray<Template.RequiredSecret>
  readonly includedSkills: ReadonlyArray<Template.IncludedSkill>
  readonly includedSkillCids: ReadonlyArray<string>
  readonly featured: boolean
  readonly status: "published" | "archived"
  readonly visibility: Template.Visibility
  readonly publisher: Template.Publisher
  readonly workspaceId: string | null
  readonly gitUrl: string | null
  readonly gitCommitSha: string | null
  readonly createdAt: string
  readonly updatedAt: string
  readonly userId: string
  /** The wallet whose EIP-712 signature the folder's CID carries (`/v3` signatures, public network), if any. */
  readonly signedBy: string | null
}

interface Row {
  readonly id: string
  readonly slug: string
  readonly version: number
  readonly name: string
  readonly description: string
  readonly category: string
  readonly tags: string
  readonly snapshot_cid: string
  readonly openclaw_version: string | null
  readonly required_secrets: string
  readonly included_skills: string
  readonly featured: boolean
  readonly status: "published" | "archived"
  readonly visibility: Template.Visibility
  readonly publisher: Template.Publisher
  readonly workspace_id: string | null
  readonly user_id: string
  readonly git_url: string | null
  readonly git_commit_sha: string | null
  readonly created_at: Date
  readonly updated_at: Date
  readonly signed_by: string | null
}

const toView = (row: Row): TemplateView => {
  const includedSkills = JSON.parse(row.included_skills) as ReadonlyArray<Template.IncludedSkill>
  return {
    templateId: row.id,
    name: row.name,
    slug: row.slug,
    version: row.version,
    description: row.description,
    category: row.category,
    tags: JSON.parse(row.tags) as ReadonlyArray<string>,
    snapshotCid: row.snapshot_cid,
    openclawVersion: row.openclaw_version,
    requiredSecrets: JSON.parse(row.required_secrets) as ReadonlyArray<Template.RequiredSecret>,
    includedSkills,
    includedSkillCids: includedSkills.flatMap((skill) => (skill.cid === undefined ? [] : [skill.cid])),
    featured: row.featured,
    status: row.status,
    visibility: row.visibility,
    publisher: row.publisher,
    workspaceId: row.workspace_id,
    gitUrl: row.git_url,
    gitCommitSha: row.git_commit_sha,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    userId: row.user_id,
    signedBy: row.signed_by
  }
}

/**
 * Who is looking: a workspace sees public templates and its own, anyone (no credentials, the public marketplace)
 * public ones only, an operator all.
 */
export type Viewer = { readonly workspaceId: string } | "anyone" | "operator"

/** Which templates a list shows; every filter left out matches all. */
export interface ListQuery {
  readonly viewer: Viewer
  readonly featured?: boolean
  readonly category?: string
  /** Only the templates this workspace published. */
  readonly publishedBy?: string
}

/** The queries the services make of it. */
export const queries = (sql: SqlClient.SqlClient) => {
  const visible = (viewer: Viewer) =>
    viewer === "operator"
      ? sql`true`
      : viewer === "anyone"
      ? sql`visibility = 'public'`
      : sql`(visibility = 'public' OR cairn_templates.workspace_id = ${viewer.workspaceId})`
  // Each template with who signed its folder's CID, if anyone did.
  const withSigner = sql`cairn_templates.*, signer.address AS signed_by FROM cairn_templates
    ${publicSignerJoin(sql, "cairn_templates.snapshot_cid")}`
  return {
    /** Published templates the caller sees: featured first, then by name. */
    list: (query: ListQuery) =>
      sql<Row>`SELECT ${withSigner} WHERE ${
        sql.and([
          sql`status = 'published'`,
          visible(query.viewer),
          ...(query.featured === undefined ? [] : [sql`featured = ${query.featured}`]),
          ...(query.category === undefined ? [] : [sql`lower(category) = lower(${query.category})`]),
          ...(query.publishedBy === undefined ? [] : [sql`cairn_templates.workspace_id = ${query.publishedBy}`])
        ])
      } ORDER BY featured DESC, name, slug`.pipe(Effect.orDie, Effect.map((rows) => rows.map(toView))),
    /** The categories of the published templates the caller sees, sorted. */
    categories: (viewer: Viewer) =>
      sql<{ readonly category: string }>`SELECT DISTINCT category FROM cairn_templates
        WHERE status = 'published' AND ${visible(viewer)} ORDER BY category`.pipe(
        Effect.orDie,
        Effect.map((rows) => rows.map((row) => row.category))
      ),
    byId: (templateId: string) =>
      sql<Row>`SELECT ${withSigner} WHERE id = ${templateId}`.pipe(
        Effect.orDie,
        Effect.map((rows) => Option.map(Option.fromNullishOr(rows[0]), toView))
      ),
    bySlug: (slug: string) =>
      sql<Row>`SELECT ${withSigner} WHERE slug = ${slug}`.pipe(
        Effect.orDie,
        Effect.map((rows) => Option.map(Option.fromNullishOr(rows[0]), toView))
      )
  }
}
