/**
 * What happens to a group (stream `group-<id>`): created on one network for one workspace, renamed or marked
 * public, deleted. These are stored: their schemas only ever grow optional fields.
 */
import { Schema } from "effect"
import { Network } from "../Network.ts"

export class GroupCreated extends Schema.TaggedClass<GroupCreated>()("GroupCreated", {
  groupId: Schema.String,
  workspaceId: Schema.String,
  network: Network,
  name: Schema.String,
  /** Pinata's `is_public` flag: kept and filtered on; what the gateway serves is decided by each file's network. */
  isPublic: Schema.Boolean,
  at: Schema.String
}) {}

/** Only what changed: a field left out keeps its value. */
export class GroupUpdated extends Schema.TaggedClass<GroupUpdated>()("GroupUpdated", {
  groupId: Schema.String,
  name: Schema.optional(Schema.String),
  isPublic: Schema.optional(Schema.Boolean),
  at: Schema.String
}) {}

/** The group is gone; its files stay, in no group (the files read model lets go of them in the same transaction). */
export class GroupDeleted extends Schema.TaggedClass<GroupDeleted>()("GroupDeleted", {
  groupId: Schema.String,
  workspaceId: Schema.String,
  network: Network,
  at: Schema.String
}) {}

export const GroupEvent = Schema.Union([GroupCreated, GroupUpdated, GroupDeleted])
export type GroupEvent = typeof GroupEvent.Type
