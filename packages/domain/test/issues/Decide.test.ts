import { Issue } from "@cairn/domain"
import { assert, describe, it } from "@effect/vitest"
import { given } from "../DeciderSpec.ts"

const at = "2026-11-22T10:00:00.000Z"
const fields = { issueId: "i1", workspaceId: "w1", userId: "u1", title: "Broken", body: "It broke.", at }

describe("an issue", () => {
  it("is filed once, and a second filing under its id is refused", () => {
    given(Issue.decider).when(new Issue.FileIssue(fields)).then([new Issue.IssueFiled(fields)])
    given(Issue.decider, [new Issue.IssueFiled(fields)]).when(new Issue.FileIssue(fields)).thenFails(new Issue.IssueAlreadyExists({ issueId: "i1" }))
  })

  it("is hidden from accounts that are not internal behind 404 Not found", () => {
    const error = new Issue.IssuesNotAvailable()
    assert.strictEqual(error.status, 404)
    assert.strictEqual(error.message, "Not found")
  })
})
