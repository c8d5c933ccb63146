/** An issue filed by an internal account (the issues endpoints are closed to everyone else). Stream `issue-<id>`. */
import { Schema } from "effect"

export class IssueFiled extends Schema.TaggedClass<IssueFiled>()("IssueFiled", {
  issueId: Schema.String,
  workspaceId: Schema.String,
  userId: Schema.String,
  title: Schema.String,
  body: Schema.String,
  at: Schema.String
}) {}

export const IssueEvent = Schema.Union([IssueFiled])

export const stream = (issueId: string) => `issue-${issueId}`
