/**
 * What happens to a file (stream `file-<id>`): uploaded to one network for one workspace, renamed or given new
 * key-values, added to a group or taken out of it, deleted. These are stored: their schemas only ever grow optional fields.
 */
import { Schema } from "effect"
import { Network } from "../Network.ts"

export const KeyValues = Schema.Record(Schema.String, Schema.String)
export type KeyValues = typeof KeyValues.Type

export class FileUploaded extends Schema.TaggedClass<FileUploaded>()("FileUploaded", {
  fileId: Schema.String,
  workspaceId: Schema.String,
  userId: Schema.String,
  network: Network,
  cid: Schema.String,
  name: Schema.String,
  size: Schema.Number,
  mimeType: Schema.String,
  groupId: Schema.NullOr(Schema.String),
  keyvalues: KeyValues,
  numberOfFiles: Schema.Int,
  at: Schema.String
}) {}

/** Only what changed: a field left out keeps its value. */
export class FileUpdated extends Schema.TaggedClass<FileUpdated>()("FileUpdated", {
  fileId: Schema.String,
  name: Schema.optional(Schema.String),
  keyvalues: Schema.optional(KeyValues),
  at: Schema.String
}) {}

export class FileDeleted extends Schema.TaggedClass<FileDeleted>()("FileDeleted", {
  fileId: Schema.String,
  at: Schema.String
}) {}

/**
 * The file joined a group of its workspace on its network (leaving the one it was in, if any). A group deleted
 * later takes no event here: a file whose group is deleted is in no group (the files read model says so).
 */
export class FileAddedToGroup extends Schema.TaggedClass<FileAddedToGroup>()("FileAddedToGroup", {
  fileId: Schema.String,
  groupId: Schema.String,
  at: Schema.String
}) {}

export class FileRemovedFromGroup extends Schema.TaggedClass<FileRemovedFromGroup>()("FileRemovedFromGroup", {
  fileId: Schema.String,
  groupId: Schema.String,
  at: Schema.String
}) {}

export const FileEvent = Schema.Union([FileUploaded, FileUpdated, FileAddedToGroup, FileRemovedFromGroup, FileDeleted])
export type FileEvent = typeof FileEvent.Type
