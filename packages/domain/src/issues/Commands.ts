/** What can be asked of an issue: a user of an internal account files it (the service checks the account). */
import { Schema } from "effect"
import { fieldsOf } from "../Decider.ts"
import { IssueFiled } from "./Events.ts"

/** The issue is recorded as it is filed: the command has the event's fields. */
export class FileIssue extends Schema.TaggedClass<FileIssue>()("FileIssue", fieldsOf(IssueFiled.fields)) {}

export const IssueCommand = Schema.Union([FileIssue])
export type IssueCommand = typeof IssueCommand.Type
