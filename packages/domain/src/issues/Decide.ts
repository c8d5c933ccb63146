/** Decides an issue command: an issue is filed once. Pure and total. */
import { Match, Result } from "effect"
import type { IssueCommand } from "./Commands.ts"
import { IssueAlreadyExists, type IssueError } from "./Errors.ts"
import { type IssueEvent, IssueFiled } from "./Events.ts"
import type { IssueState } from "./State.ts"

export type Decision = Result.Result<ReadonlyArray<IssueEvent>, IssueError>

export const decide = (command: IssueCommand, state: IssueState): Decision =>
  Match.valueTags(command, {
    FileIssue: ({ _tag, ...fields }): Decision =>
      state._tag === "NoIssue"
        ? Result.succeed([new IssueFiled(fields)])
        : Result.fail(new IssueAlreadyExists({ issueId: fields.issueId }))
  })
