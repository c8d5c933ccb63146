/** `/v0/issues`: file and list issues. Only internal accounts may see that these routes exist (404 otherwise). */
import { Issues } from "@cairn/application"
import { Effect, Schema } from "effect"
import { HttpRouter } from "effect/http"
import * as Kit from "./Kit.ts"

const FileIssue = Schema.Struct({
  title: Schema.String.pipe(Schema.check(Schema.isMinLength(1), Schema.isMaxLength(200))),
  body: Schema.optional(Schema.String.pipe(Schema.check(Schema.isMaxLength(20_000))))
})

export const layer = HttpRouter.use((router) =>
  Effect.gen(function*() {
    const { route } = yield* Kit.make(router)
    const issues = yield* Issues

    yield* route("GET", "/v0/issues", ({ principal }) => Effect.map(issues.list(principal), (list) => ({ issues: list })))

    yield* route("POST", "/v0/issues", ({ principal, body }) =>
      Effect.gen(function*() {
        // Checked before the body is read: a non-internal caller learns nothing, not even what the body should be.
        yield* issues.available(principal)
        const input = yield* body(FileIssue)
        const issue = yield* issues.file(principal, { title: input.title, body: input.body ?? "" })
        return Kit.created({ success: true, issue })
      }))
  })
)
