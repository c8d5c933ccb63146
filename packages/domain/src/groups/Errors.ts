/** Why a group command was refused. */
import { Schema } from "effect"

/** A wrong id, another workspace's group, a group on the other network, or a deleted one. */
export class GroupNotFound extends Schema.TaggedError<GroupNotFound>()("GroupNotFound", { groupId: Schema.String }) {
  readonly status = 404
  override readonly message = "Group not found"
}

/** Group ids are random; a second create under the same id is refused rather than overwriting the first group. */
export class GroupAlreadyExists extends Schema.TaggedError<GroupAlreadyExists>()("GroupAlreadyExists", { groupId: Schema.String }) {
  readonly status = 409
  override readonly message = "Group already exists"
}

/** A workspace's groups on one network have distinct names, as on Pinata (a second "My Album" is refused). */
export class DuplicateGroupName extends Schema.TaggedError<DuplicateGroupName>()("DuplicateGroupName", { name: Schema.String }) {
  readonly status = 409
  override readonly message = "Duplicate group name"
}

export type GroupError = GroupNotFound | GroupAlreadyExists
