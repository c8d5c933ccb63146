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

/** A workspace is deleted only once its agents are: their gateways and secrets would be orphaned otherwise. */
export class WorkspaceHasAgents extends Schema.TaggedError<WorkspaceHasAgents>()("WorkspaceHasAgents", { agents: Schema.Int }) {
  readonly status = 409
  override get message() {
    return `Workspace still has ${this.agents} agent(s): delete them first`
  }
}

export type WorkspaceError = WorkspaceNotFound | WorkspaceAlreadyExists | AgentLimitReached | WorkspaceHasAgents
