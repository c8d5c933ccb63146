/** What can be asked of an issue: a user of an internal account files it (the service checks the account). */
import { Schema } from "effect"

export class FileIssue extends Schema.TaggedClass<FileIssue>()("FileIssue", {
  issueId: Schema.String,
  workspaceId: Schema.String,
  userId: Schema.String,
  title: Schema.String,
  body: Schema.String,
  at: Schema.String
}) {}

export const IssueCommand = Schema.Union([FileIssue])
export type IssueCommand = typeof IssueCommand.Type
