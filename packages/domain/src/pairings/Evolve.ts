/** The pairings log holds no state: every event leaves it as it was. */
import type { PairingEvent } from "./Events.ts"
import type { PairingState } from "./State.ts"

export const evolve = (state: PairingState, _event: PairingEvent): PairingState => state
