/**
 * Decides a config-record command: a write that changed something is recorded; one that changed nothing (no
 * top-level key differs and the engine's hash is the one it replaced) leaves no event. Pure and total.
 */
import { Match, Result } from "effect"
import type { RuntimeConfigCommand } from "./Commands.ts"
import type { RuntimeConfigError } from "./Errors.ts"
import { type RuntimeConfigEvent, RuntimeConfigWritten } from "./Events.ts"
import type { RuntimeConfigState } from "./State.ts"

export type Decision = Result.Result<ReadonlyArray<RuntimeConfigEvent>, RuntimeConfigError>

export const decide = (command: RuntimeConfigCommand, _state: RuntimeConfigState): Decision =>
  Match.valueTags(command, {
    RecordConfigWrite: ({ _tag, ...fields }): Decision =>
      fields.changedPaths.length === 0 && fields.previousHash === fields.hash
        ? Result.succeed([])
        : Result.succeed([new RuntimeConfigWritten(fields)])
  })
