/** Why a workspace command was refused. */
import { Schema } from "effect"

export class WorkspaceNotFound extends Schema.TaggedError<WorkspaceNotFound>()("WorkspaceNotFound", { workspaceId: Schema.String }) {
  readonly status = 404
  override readonly message = "Workspace not found"
}

/** Workspace ids are random; a second create under the same id is refused. */
export class WorkspaceAlreadyExists extends Schema.TaggedError<WorkspaceAlreadyExists>()("WorkspaceAlreadyExists", { workspaceId: Schema.String }) {
  readonly status = 409
  override readonly message = "Workspace already exists"
}

/** Creating an agent would exceed the workspace's plan. */
export class AgentLimitReached extends Schema.TaggedError<AgentLimitReached>()("AgentLimitReached", { limit: Schema.Int }) {
  readonly status = 403
  override readonly message = "Agent limit reached"
}

export type WorkspaceError = WorkspaceNotFound | WorkspaceAlreadyExists | AgentLimitReached
