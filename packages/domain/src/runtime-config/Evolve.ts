/** Folds one config-record event into the record's state. */
import { Match } from "effect"
import type { RuntimeConfigEvent } from "./Events.ts"
import type { RuntimeConfigState } from "./State.ts"

export const evolve = (state: RuntimeConfigState, event: RuntimeConfigEvent): RuntimeConfigState =>
  Match.valueTags(event, {
    RuntimeConfigWritten: (written): RuntimeConfigState => ({ lastHash: written.hash, writes: state.writes + 1 })
  })
