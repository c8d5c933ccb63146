/** Decides a console record: each is recorded as it happened. Pure and total. */
import { Match, Result } from "effect"
import type { ConsoleCommand } from "./Commands.ts"
import type { ConsoleError } from "./Errors.ts"
import { ConsoleCommandNotRun, ConsoleCommandRan, type ConsoleEvent } from "./Events.ts"
import type { ConsoleState } from "./State.ts"

export type Decision = Result.Result<ReadonlyArray<ConsoleEvent>, ConsoleError>

export const decide = (command: ConsoleCommand, _state: ConsoleState): Decision =>
  Match.valueTags(command, {
    RecordRun: ({ _tag, ...fields }): Decision => Result.succeed([new ConsoleCommandRan(fields)]),
    RecordNotRun: ({ _tag, ...fields }): Decision => Result.succeed([new ConsoleCommandNotRun(fields)])
  })
