/**
 * What can be asked of a template. The application reads and validates the folder, stores it and claims the slug
 * before deciding; a command carries who asks (`actor`), which decides what they may see and change.
 */
import { Schema } from "effect"
import { fieldsOf } from "../Decider.ts"
import { TemplatePublished, versionFields } from "./Events.ts"

/** Who asks: a workspace's member, an operator (the admin API), or Cairn itself (the shipped catalog at startup). */
export const Actor = Schema.Union([
  Schema.TaggedStruct("Workspace", { workspaceId: Schema.String }),
  Schema.TaggedStruct("Admin", {}),
  Schema.TaggedStruct("Cairn", {})
])
export type Actor = typeof Actor.Type

export class PublishTemplate extends Schema.TaggedClass<PublishTemplate>()("PublishTemplate", fieldsOf(TemplatePublished.fields)) {}

/** Publishes the folder given as the template's next version; the same folder, name and flag record nothing. */
export class UpdateTemplate extends Schema.TaggedClass<UpdateTemplate>()("UpdateTemplate", {
  templateId: Schema.String,
  actor: Actor,
  ...versionFields,
  /** Left out: stays as it is. */
  featured: Schema.optionalKey(Schema.Boolean),
  userId: Schema.String,
  at: Schema.String
}) {}

export class ArchiveTemplate extends Schema.TaggedClass<ArchiveTemplate>()("ArchiveTemplate", {
  templateId: Schema.String,
  actor: Actor,
  userId: Schema.String,
  at: Schema.String
}) {}

export const TemplateCommand = Schema.Union([PublishTemplate, UpdateTemplate, ArchiveTemplate])
export type TemplateCommand = typeof TemplateCommand.Type
