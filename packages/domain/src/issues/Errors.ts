/** Why an issue command, or the issues endpoints as a whole, refused the caller. */
import { Schema } from "effect"

/** The issues endpoints exist only for internal accounts; everyone else is told there is nothing here. */
export class IssuesNotAvailable extends Schema.TaggedError<IssuesNotAvailable>()("IssuesNotAvailable", {}) {
  readonly status = 404
  override readonly message = "Not found"
}

/** Issue ids are random; a second filing under the same id is refused rather than overwriting the first issue. */
export class IssueAlreadyExists extends Schema.TaggedError<IssueAlreadyExists>()("IssueAlreadyExists", { issueId: Schema.String }) {
  readonly status = 409
  override readonly message = "Issue already exists"
}

export type IssueError = IssueAlreadyExists
