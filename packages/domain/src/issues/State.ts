/** An issue as its history leaves it: not filed yet, or filed. */
import type { IssueFiled } from "./Events.ts"

export type IssueState =
  | { readonly _tag: "NoIssue" }
  | { readonly _tag: "Filed"; readonly filed: IssueFiled }

export const initial: IssueState = { _tag: "NoIssue" }
