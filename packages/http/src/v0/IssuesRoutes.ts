/** `/v0/issues`: file and list issues. Only internal accounts may see that these routes exist (404 otherwise). */
import { Issues, type IssueView } from "@cairn/application"
import { Issue } from "@cairn/domain"
import { Effect, Schema } from "effect"
import { HttpRouter } from "effect/http"
import * as Kit from "./Kit.ts"

const FileIssue = Schema.Struct({
  title: Schema.String.pipe(Schema.check(Schema.isMinLength(1), Schema.isMaxLength(200))),
  body: Schema.optional(Schema.String.pipe(Schema.check(Schema.isMaxLength(20_000))))
})

/** An issue as the list shows it. */
const IssueWire = Schema.Struct({ id: Schema.String, title: Schema.String, body: Schema.String, userId: Schema.String, createdAt: Schema.String })
const issueWire = (issue: IssueView): typeof IssueWire.Type => ({
  id: issue.id,
  title: issue.title,
  body: issue.body,
  userId: issue.userId,
  createdAt: issue.createdAt
})
/** An issue as a filing answers it: the caller is its author. */
const FiledIssueWire = Schema.Struct({ id: Schema.String, title: Schema.String, body: Schema.String, createdAt: Schema.String })

export const layer = HttpRouter.use((router) =>
  Effect.gen(function*() {
    const { route } = yield* Kit.make(router)
    const issues = yield* Issues

    yield* route("GET", "/v0/issues", { summary: "List issues (internal accounts only)", response: { schema: Schema.Struct({ issues: Schema.Array(IssueWire) }) }, errors: [new Issue.IssuesNotAvailable()] }, ({ principal }) => Effect.map(issues.list(principal), (list) => ({ issues: list.map(issueWire) })))

    yield* route("POST", "/v0/issues", { summary: "File an issue (internal accounts only)", body: { schema: FileIssue }, response: { status: 201, schema: Schema.Struct({ success: Schema.Boolean, issue: FiledIssueWire }) }, errors: [new Issue.IssuesNotAvailable()] }, ({ principal, body }) =>
      Effect.gen(function*() {
        // Checked before the body is read: a non-internal caller learns nothing, not even what the body should be.
        yield* issues.available(principal)
        const input = yield* body(FileIssue)
        const issue = yield* issues.file(principal, { title: input.title, body: input.body ?? "" })
        const filed: typeof FiledIssueWire.Type = { id: issue.id, title: issue.title, body: issue.body, createdAt: issue.createdAt }
        return Kit.created({ success: true, issue: filed })
      }))
  })
)
