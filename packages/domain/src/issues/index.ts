/**
 * Issues filed by internal accounts (the issues endpoints are closed to everyone else, who get 404 Not found).
 * Stream `issue-<id>`.
 */
import type { Decider } from "../Decider.ts"
import type { IssueCommand } from "./Commands.ts"
import { decide } from "./Decide.ts"
import type { IssueError } from "./Errors.ts"
import { IssueEvent } from "./Events.ts"
import { evolve } from "./Evolve.ts"
import { initial, type IssueState } from "./State.ts"

export * from "./Commands.ts"
export { decide, type Decision } from "./Decide.ts"
export * from "./Errors.ts"
export * from "./Events.ts"
export { evolve } from "./Evolve.ts"
export * from "./State.ts"

export const stream = (issueId: string) => `issue-${issueId}`

export const decider: Decider<IssueCommand, IssueEvent, IssueState, IssueError> = { initial, decide, evolve, events: IssueEvent }
