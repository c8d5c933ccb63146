/** Folds one template event into the template's state; nothing changes an archived template. */
import { Match } from "effect"
import type { TemplateEvent, TemplatePublished, versionFields } from "./Events.ts"
import type { TemplateState } from "./State.ts"

/** What a published version says: the fields TemplatePublished and TemplateUpdated share, as the state keeps them. */
const versionOf = (e: Pick<TemplatePublished, keyof typeof versionFields>) => ({
  name: e.name,
  description: e.description,
  category: e.category,
  tags: e.tags,
  snapshotCid: e.snapshotCid,
  manifest: e.manifest,
  requiredSecrets: e.requiredSecrets,
  includedSkills: e.includedSkills,
  openclawVersion: e.openclawVersion,
  gitUrl: e.gitUrl,
  gitRef: e.gitRef,
  gitPath: e.gitPath,
  gitCommitSha: e.gitCommitSha
})

export const evolve = (state: TemplateState, event: TemplateEvent): TemplateState =>
  Match.valueTags(event, {
    TemplatePublished: (e): TemplateState => ({
      _tag: "Published",
      template: {
        templateId: e.templateId,
        slug: e.slug,
        version: 1,
        ...versionOf(e),
        visibility: e.visibility,
        featured: e.featured,
        publisher: e.publisher,
        workspaceId: e.workspaceId,
        userId: e.userId,
        createdAt: e.at,
        updatedAt: e.at
      }
    }),
    TemplateUpdated: (e): TemplateState =>
      state._tag === "Published"
        ? {
          _tag: "Published",
          template: {
            ...state.template,
            version: e.version,
            ...versionOf(e),
            featured: e.featured,
            updatedAt: e.at
          }
        }
        : state,
    TemplateArchived: (e): TemplateState =>
      state._tag === "Published" ? { _tag: "Archived", template: { ...state.template, updatedAt: e.at } } : state
  })
