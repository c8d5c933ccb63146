/**
 * Reservations: uniqueness across aggregates (a secret's name in its workspace, a subdomain across tenants). The
 * key is the stream's name; claiming it is decided in the same append as the owner's own event, so two owners
 * racing for one key cannot both win, and nothing is read from a read model to decide.
 */
import type { Decider } from "../Decider.ts"
import type { ReservationCommand } from "./Commands.ts"
import { decide } from "./Decide.ts"
import type { ReservationTaken } from "./Errors.ts"
import { ReservationEvent } from "./Events.ts"
import { evolve } from "./Evolve.ts"
import { initial, type ReservationState } from "./State.ts"

export * from "./Commands.ts"
export { decide, type Decision } from "./Decide.ts"
export * from "./Errors.ts"
export * from "./Events.ts"
export { evolve } from "./Evolve.ts"
export * from "./State.ts"

export const decider: Decider<ReservationCommand, ReservationEvent, ReservationState, ReservationTaken> = {
  initial,
  decide,
  evolve,
  events: ReservationEvent
}
