/** Decides a claim or a release. Claiming again for the same owner, or releasing what one does not hold, records nothing. */
import { Match, Result } from "effect"
import type { ReservationCommand } from "./Commands.ts"
import { ReservationTaken } from "./Errors.ts"
import { ReservationClaimed, type ReservationEvent, ReservationReleased } from "./Events.ts"
import type { ReservationState } from "./State.ts"

export type Decision = Result.Result<ReadonlyArray<ReservationEvent>, ReservationTaken>

export const decide = (command: ReservationCommand, state: ReservationState): Decision =>
  Match.valueTags(command, {
    ClaimReservation: ({ owner, at }): Decision =>
      state._tag === "Free"
        ? Result.succeed([new ReservationClaimed({ owner, at })])
        : state.owner === owner
        ? Result.succeed([])
        : Result.fail(new ReservationTaken({ owner: state.owner })),
    ReleaseReservation: ({ owner, at }): Decision =>
      Result.succeed(state._tag === "Held" && state.owner === owner ? [new ReservationReleased({ owner, at })] : [])
  })
