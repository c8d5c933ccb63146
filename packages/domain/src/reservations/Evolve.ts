/** Folds one reservation event into its state. */
import { Match } from "effect"
import type { ReservationEvent } from "./Events.ts"
import type { ReservationState } from "./State.ts"

export const evolve = (_state: ReservationState, event: ReservationEvent): ReservationState =>
  Match.valueTags(event, {
    ReservationClaimed: ({ owner }): ReservationState => ({ _tag: "Held", owner }),
    ReservationReleased: (): ReservationState => ({ _tag: "Free" })
  })
