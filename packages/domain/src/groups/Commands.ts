/**
 * What a user can ask of a group. Each command carries the caller's workspace and the network it asked on: a group
 * of another workspace, or looked up on the other network, is not found. The service checks the name first.
 */
import { Schema } from "effect"
import { fieldsOf } from "../Decider.ts"
import { Network } from "../Network.ts"
import { GroupCreated } from "./Events.ts"

/** The group is recorded as it is asked: the command has the event's fields. */
export class CreateGroup extends Schema.TaggedClass<CreateGroup>()("CreateGroup", fieldsOf(GroupCreated.fields)) {}

/** Renames the group or changes its `is_public` flag; what the command leaves out is kept. */
export class UpdateGroup extends Schema.TaggedClass<UpdateGroup>()("UpdateGroup", {
  groupId: Schema.String,
  workspaceId: Schema.String,
  network: Network,
  name: Schema.optionalKey(Schema.String),
  isPublic: Schema.optionalKey(Schema.Boolean),
  at: Schema.String
}) {}

export class DeleteGroup extends Schema.TaggedClass<DeleteGroup>()("DeleteGroup", {
  groupId: Schema.String,
  workspaceId: Schema.String,
  network: Network,
  at: Schema.String
}) {}

/**
 * Records nothing, and is refused when the group is not this workspace's on this network: decided beside a file's
 * own event (an upload into the group, a file added to it) so the group cannot be deleted in between.
 */
export class RequireGroup extends Schema.TaggedClass<RequireGroup>()("RequireGroup", {
  groupId: Schema.String,
  workspaceId: Schema.String,
  network: Network
}) {}

export const GroupCommand = Schema.Union([CreateGroup, UpdateGroup, DeleteGroup, RequireGroup])
export type GroupCommand = typeof GroupCommand.Type
