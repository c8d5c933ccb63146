/**
 * What a user can ask of a file. Each command carries the caller's workspace and the network it asked on: a file
 * of another workspace, or looked up on the other network, is not found. The service stores the content first and
 * puts its CID and size into the upload.
 */
import { Schema } from "effect"
import { fieldsOf } from "../Decider.ts"
import { Network } from "../Network.ts"
import { FileUploaded, KeyValues } from "./Events.ts"

/** The upload is recorded as it is asked: the command has the event's fields. */
export class UploadFile extends Schema.TaggedClass<UploadFile>()("UploadFile", fieldsOf(FileUploaded.fields)) {}

/** Renames the file or replaces its key-values; what the command leaves out is kept. */
export class UpdateFile extends Schema.TaggedClass<UpdateFile>()("UpdateFile", {
  fileId: Schema.String,
  workspaceId: Schema.String,
  network: Network,
  name: Schema.optionalKey(Schema.String),
  keyvalues: Schema.optionalKey(KeyValues),
  at: Schema.String
}) {}

export class DeleteFile extends Schema.TaggedClass<DeleteFile>()("DeleteFile", {
  fileId: Schema.String,
  workspaceId: Schema.String,
  network: Network,
  at: Schema.String
}) {}

/** Puts the file in the group (the service decides the group's existence beside it); already there records nothing. */
export class AddFileToGroup extends Schema.TaggedClass<AddFileToGroup>()("AddFileToGroup", {
  fileId: Schema.String,
  workspaceId: Schema.String,
  network: Network,
  groupId: Schema.String,
  at: Schema.String
}) {}

/** Takes the file out of the group; a file that is not in that group is left as it is and nothing is recorded. */
export class RemoveFileFromGroup extends Schema.TaggedClass<RemoveFileFromGroup>()("RemoveFileFromGroup", {
  fileId: Schema.String,
  workspaceId: Schema.String,
  network: Network,
  groupId: Schema.String,
  at: Schema.String
}) {}

export const FileCommand = Schema.Union([UploadFile, UpdateFile, AddFileToGroup, RemoveFileFromGroup, DeleteFile])
export type FileCommand = typeof FileCommand.Type
