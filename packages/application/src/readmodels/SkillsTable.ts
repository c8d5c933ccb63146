/**
 * `cairn_skills`: one row per library skill (its current version), `cairn_skill_versions`: every folder CID a
 * skill had (so a CID finds its skill and revision), and `cairn_agent_skills`: which agents hold which skill at
 * which version. Lists, lookups by CID and the update check read them.
 */
import { Agent, Skill } from "@cairn/domain"
import { Effect, Schema } from "effect"
import type { SqlClient } from "effect/sql"
import * as ReadModel from "./ReadModel.ts"
import { publicSignerJoin } from "./SignaturesTable.ts"

export const projection = ReadModel.make({
  name: "skills",
  events: Schema.Union([Skill.SkillEvent, Agent.AgentEvent]),
  tables: ["cairn_skills", "cairn_skill_versions", "cairn_agent_skills"],
  setup: (sql) =>
    Effect.all([
      sql`CREATE TABLE IF NOT EXISTS cairn_skills (
        id text PRIMARY KEY, workspace_id text NOT NULL, user_id text NOT NULL, name text NOT NULL, description text NOT NULL,
        env_vars text NOT NULL, source text NOT NULL, slug text, cid text NOT NULL, version text, revision int NOT NULL,
        created_at timestamptz NOT NULL, updated_at timestamptz NOT NULL)`,
      sql`CREATE INDEX IF NOT EXISTS cairn_skills_workspace ON cairn_skills (workspace_id, name)`,
      sql`CREATE TABLE IF NOT EXISTS cairn_skill_versions (
        skill_id text NOT NULL, revision int NOT NULL, workspace_id text NOT NULL, cid text NOT NULL, version text,
        added_at timestamptz NOT NULL, PRIMARY KEY (skill_id, revision))`,
      sql`CREATE INDEX IF NOT EXISTS cairn_skill_versions_cid ON cairn_skill_versions (workspace_id, cid)`,
      sql`CREATE TABLE IF NOT EXISTS cairn_agent_skills (
        agent_id text NOT NULL, skill_id text NOT NULL, name text NOT NULL, cid text NOT NULL, revision int NOT NULL,
        version text, attached_at timestamptz NOT NULL, updated_at timestamptz NOT NULL, PRIMARY KEY (agent_id, skill_id))`,
      sql`CREATE INDEX IF NOT EXISTS cairn_agent_skills_skill ON cairn_agent_skills (skill_id)`
    ]),
  on: {
    SkillAdded: (sql, e) =>
      Effect.all([
        sql`INSERT INTO cairn_skills (id, workspace_id, user_id, name, description, env_vars, source, slug, cid, version, revision, created_at, updated_at)
          VALUES (${e.skillId}, ${e.workspaceId}, ${e.userId}, ${e.name}, ${e.description}, ${JSON.stringify(e.envVars)}, ${e.source},
            ${e.slug ?? null}, ${e.cid}, ${e.version ?? null}, 1, ${e.at}, ${e.at}) ON CONFLICT (id) DO NOTHING`,
        sql`INSERT INTO cairn_skill_versions (skill_id, revision, workspace_id, cid, version, added_at)
          VALUES (${e.skillId}, 1, ${e.workspaceId}, ${e.cid}, ${e.version ?? null}, ${e.at}) ON CONFLICT DO NOTHING`
      ], { discard: true }),
    SkillVersionAdded: (sql, e) =>
      Effect.all([
        sql`UPDATE cairn_skills SET description = ${e.description}, env_vars = ${JSON.stringify(e.envVars)}, cid = ${e.cid},
          version = ${e.version ?? null}, revision = ${e.revision}, updated_at = ${e.at} WHERE id = ${e.skillId}`,
        sql`INSERT INTO cairn_skill_versions (skill_id, revision, workspace_id, cid, version, added_at)
          SELECT ${e.skillId}, ${e.revision}, workspace_id, ${e.cid}, ${e.version ?? null}, ${e.at} FROM cairn_skills WHERE id = ${e.skillId}
          ON CONFLICT DO NOTHING`
      ], { discard: true }),
    SkillRemoved: (sql, e) =>
      Effect.all([
        sql`DELETE FROM cairn_skills WHERE id = ${e.skillId}`,
        sql`DELETE FROM cairn_skill_versions WHERE skill_id = ${e.skillId}`
      ], { discard: true }),
    AgentSkillsAttached: (sql, e) =>
      Effect.forEach(e.skills, (s) =>
        sql`INSERT INTO cairn_agent_skills (agent_id, skill_id, name, cid, revision, version, attached_at, updated_at)
          VALUES (${e.agentId}, ${s.skillId}, ${s.name}, ${s.cid}, ${s.revision}, ${s.version ?? null}, ${e.at}, ${e.at})
          ON CONFLICT (agent_id, skill_id) DO NOTHING`, { discard: true }),
    AgentSkillUpdated: (sql, e) =>
      sql`UPDATE cairn_agent_skills SET cid = ${e.skill.cid}, revision = ${e.skill.revision}, version = ${e.skill.version ?? null},
        updated_at = ${e.at} WHERE agent_id = ${e.agentId} AND skill_id = ${e.skill.skillId}`,
    AgentSkillDetached: (sql, e) => sql`DELETE FROM cairn_agent_skills WHERE agent_id = ${e.agentId} AND skill_id = ${e.skillId}`,
    AgentDeleted: (sql, e) => sql`DELETE FROM cairn_agent_skills WHERE agent_id = ${e.agentId}`
  }
})

/** A library skill as `GET /v0/skills` lists it. */
export interface SkillView {
  readonly skillId: string
  readonly skillCid: string
  readonly name: string
  readonly description: string
  readonly createdAt: string
  readonly updatedAt: string
  readonly userId: string
  readonly envVars: ReadonlyArray<Skill.EnvVar>
  readonly version: string | null
  readonly revision: number
  readonly source: Skill.Source
  readonly slug: string | null
  readonly fileId: null
  /** The wallet whose EIP-712 signature the folder's CID carries (`/v3` signatures, public network), if any. */
  readonly signedBy: string | null
}

/** A skill as an agent holds it, and whether the library has a newer version. */
export interface AgentSkillView {
  readonly skillId: string
  readonly skillCid: string
  readonly name: string
  readonly description: string
  readonly version: string | null
  readonly revision: number
  readonly source: Skill.Source
  readonly slug: string | null
  readonly attachedAt: string
  readonly updatedAt: string
  readonly latestCid: string
  readonly latestRevision: number
  readonly latestVersion: string | null
  /** Who signed the version the agent holds, if anyone. */
  readonly signedBy: string | null
}

interface SkillRow {
  readonly id: string
  readonly user_id: string
  readonly name: string
  readonly description: string
  readonly env_vars: string
  readonly source: Skill.Source
  readonly slug: string | null
  readonly cid: string
  readonly version: string | null
  readonly revision: number
  readonly created_at: Date
  readonly updated_at: Date
  readonly signed_by: string | null
}

const toView = (row: SkillRow): SkillView => ({
  skillId: row.id,
  skillCid: row.cid,
  name: row.name,
  description: row.description,
  createdAt: row.created_at.toISOString(),
  updatedAt: row.updated_at.toISOString(),
  userId: row.user_id,
  envVars: JSON.parse(row.env_vars),
  version: row.version,
  revision: row.revision,
  source: row.source,
  slug: row.slug,
  fileId: null,
  signedBy: row.signed_by
})

/** The queries the services make of them. */
export const queries = (sql: SqlClient.SqlClient) => ({
  inWorkspace: (workspaceId: string) =>
    sql<SkillRow>`SELECT s.*, signer.address AS signed_by FROM cairn_skills s ${publicSignerJoin(sql, "s.cid")}
        WHERE s.workspace_id = ${workspaceId} ORDER BY s.name, s.id`.pipe(
      Effect.orDie,
      Effect.map((rows) => rows.map(toView))
    ),
  /** The skill a folder CID is a version of, in the workspace's library, and which revision it is. */
  byCid: (workspaceId: string, cid: string) =>
    sql<{ readonly skill_id: string; readonly revision: number }>`
      SELECT skill_id, revision FROM cairn_skill_versions WHERE workspace_id = ${workspaceId} AND cid = ${cid}
       ORDER BY revision DESC LIMIT 1`.pipe(
      Effect.orDie,
      Effect.map((rows) => (rows[0] === undefined ? undefined : { skillId: rows[0].skill_id, revision: rows[0].revision }))
    ),
  ofAgent: (agentId: string) =>
    sql<SkillRow & {
      readonly agent_cid: string
      readonly agent_revision: number
      readonly agent_version: string | null
      readonly attached_at: Date
      readonly agent_updated_at: Date
    }>`
      SELECT s.*, x.cid AS agent_cid, x.revision AS agent_revision, x.version AS agent_version, x.attached_at,
             x.updated_at AS agent_updated_at, signer.address AS signed_by
        FROM cairn_agent_skills x JOIN cairn_skills s ON s.id = x.skill_id ${publicSignerJoin(sql, "x.cid")}
       WHERE x.agent_id = ${agentId}
       ORDER BY s.name`.pipe(
      Effect.orDie,
      Effect.map((rows) =>
        rows.map((row): AgentSkillView => ({
          skillId: row.id,
          skillCid: row.agent_cid,
          name: row.name,
          description: row.description,
          version: row.agent_version,
          revision: row.agent_revision,
          source: row.source,
          slug: row.slug,
          attachedAt: row.attached_at.toISOString(),
          updatedAt: row.agent_updated_at.toISOString(),
          latestCid: row.cid,
          latestRevision: row.revision,
          latestVersion: row.version,
          signedBy: row.signed_by
        }))
      )
    )
})
