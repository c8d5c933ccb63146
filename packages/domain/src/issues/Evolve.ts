/** Folds one issue event into the issue's state. */
import { Match } from "effect"
import type { IssueEvent } from "./Events.ts"
import type { IssueState } from "./State.ts"

export const evolve = (_state: IssueState, event: IssueEvent): IssueState =>
  Match.valueTags(event, {
    IssueFiled: (filed): IssueState => ({ _tag: "Filed", filed })
  })
