/** Decides a template command against the template's state. Pure and total. */
import { Match, Result } from "effect"
import type { Actor, TemplateCommand } from "./Commands.ts"
import { TemplateAlreadyExists, type TemplateError, TemplateNotFound, TemplateNotOwned } from "./Errors.ts"
import { TemplateArchived, type TemplateEvent, TemplatePublished, TemplateUpdated } from "./Events.ts"
import type { Template, TemplateState } from "./State.ts"

export type Decision = Result.Result<ReadonlyArray<TemplateEvent>, TemplateError>

/** Whether the actor sees the template at all: a public one, their workspace's, or (for an operator) any. */
export const canSee = (template: Template, actor: Actor): boolean =>
  template.visibility === "public" || actor._tag === "Admin" ||
  (actor._tag === "Workspace" && template.workspaceId === actor.workspaceId) ||
  (actor._tag === "Cairn" && template.publisher === "cairn")

/** Whether the actor may publish new versions of it or archive it: its publisher, or an operator. */
export const canChange = (template: Template, actor: Actor): boolean =>
  actor._tag === "Admin" ||
  (actor._tag === "Workspace" && template.publisher === "workspace" && template.workspaceId === actor.workspaceId) ||
  (actor._tag === "Cairn" && template.publisher === "cairn")

/** The published template as the actor sees it; an archived one, or one they may not see, is not found. */
export const visible = (state: TemplateState, template: string, actor: Actor): Result.Result<Template, TemplateNotFound> =>
  state._tag === "Published" && canSee(state.template, actor) ? Result.succeed(state.template) : Result.fail(new TemplateNotFound({ template }))

const changeable = (state: TemplateState, templateId: string, actor: Actor): Result.Result<Template, TemplateNotFound | TemplateNotOwned> =>
  Result.flatMap(visible(state, templateId, actor), (template) =>
    canChange(template, actor) ? Result.succeed(template) : Result.fail(new TemplateNotOwned({ templateId })))

export const decide = (command: TemplateCommand, state: TemplateState): Decision =>
  Match.valueTags(command, {
    PublishTemplate: ({ _tag, ...fields }): Decision =>
      state._tag === "NoTemplate"
        ? Result.succeed([new TemplatePublished(fields)])
        : Result.fail(new TemplateAlreadyExists({ templateId: fields.templateId })),
    UpdateTemplate: ({ _tag, actor, featured, ...fields }) =>
      Result.map(changeable(state, fields.templateId, actor), (template): ReadonlyArray<TemplateEvent> => {
        const nextFeatured = featured ?? template.featured
        const unchanged = fields.snapshotCid === template.snapshotCid && fields.name === template.name && nextFeatured === template.featured
        return unchanged ? [] : [new TemplateUpdated({ ...fields, version: template.version + 1, featured: nextFeatured })]
      }),
    ArchiveTemplate: ({ templateId, actor, userId, at }) =>
      Result.map(changeable(state, templateId, actor), (template) => [new TemplateArchived({ templateId, slug: template.slug, userId, at })])
  })
