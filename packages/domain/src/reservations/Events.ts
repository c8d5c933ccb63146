/** What happens to a reservation (stream `reservation-<kind>-<key>`): claimed by an owner, released by it. */
import { Schema } from "effect"

export class ReservationClaimed extends Schema.TaggedClass<ReservationClaimed>()("ReservationClaimed", {
  owner: Schema.String,
  at: Schema.String
}) {}

export class ReservationReleased extends Schema.TaggedClass<ReservationReleased>()("ReservationReleased", {
  owner: Schema.String,
  at: Schema.String
}) {}

export const ReservationEvent = Schema.Union([ReservationClaimed, ReservationReleased])
export type ReservationEvent = typeof ReservationEvent.Type
