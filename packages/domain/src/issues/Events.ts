/** What happens to an issue (stream `issue-<id>`): it is filed. Stored: the schema only ever grows optional fields. */
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
export type IssueEvent = typeof IssueEvent.Type
