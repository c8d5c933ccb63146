/** The console's log holds no state: every event leaves it as it was. */
import type { ConsoleEvent } from "./Events.ts"
import type { ConsoleState } from "./State.ts"

export const evolve = (state: ConsoleState, _event: ConsoleEvent): ConsoleState => state
