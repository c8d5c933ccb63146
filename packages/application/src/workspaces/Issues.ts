/**
 * Issues: users of internal accounts file them and list their workspace's. Everyone else is told the endpoints
 * do not exist (404 Not found), so the check comes first on every call, read from the workspaces table.
 */
import { Issue } from "@cairn/domain"
import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import type { Principal } from "../Access.ts"
import { CommandHandler } from "../CommandHandler.ts"
import { now } from "../Now.ts"
import * as IssuesTable from "../readmodels/IssuesTable.ts"
import * as WorkspacesTable from "../readmodels/WorkspacesTable.ts"

export type { IssueView } from "../readmodels/IssuesTable.ts"

export class Issues extends Context.Service<Issues>()("cairn/Issues", {
  make: Effect.gen(function*() {
    const commands = yield* CommandHandler
    const sql = yield* SqlClient.SqlClient
    const workspaces = WorkspacesTable.queries(sql)
    const issues = IssuesTable.queries(sql)

    /** Succeeds only for a principal of an internal workspace. */
    const internalOnly = (principal: Principal) =>
      workspaces.byId(principal.workspaceId).pipe(
        Effect.flatMap((workspace) =>
          Option.isSome(workspace) && workspace.value.internal ? Effect.void : Effect.fail(new Issue.IssuesNotAvailable())
        )
      )

    const file = Effect.fn("Issues.file")(function*(principal: Principal, input: { readonly title: string; readonly body: string }) {
      yield* internalOnly(principal)
      const issueId = crypto.randomUUID()
      const at = yield* now
      const command = new Issue.FileIssue({
        issueId,
        workspaceId: principal.workspaceId,
        userId: principal.userId,
        title: input.title,
        body: input.body,
        at
      })
      yield* commands.execute(Issue.decider, Issue.stream(issueId), command, { actor: principal.userId })
      return { id: issueId, title: input.title, body: input.body, createdAt: at }
    })

    /** The workspace's issues, in the order they were filed. */
    const list = (principal: Principal) => internalOnly(principal).pipe(Effect.andThen(issues.inWorkspace(principal.workspaceId)))

    return { available: internalOnly, file, list }
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
