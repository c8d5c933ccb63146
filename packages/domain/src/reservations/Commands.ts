/** Claim a unique key for an owner (a secret's id for its name), or give it back. */
import { Schema } from "effect"

export class ClaimReservation extends Schema.TaggedClass<ClaimReservation>()("ClaimReservation", {
  owner: Schema.String,
  at: Schema.String
}) {}

export class ReleaseReservation extends Schema.TaggedClass<ReleaseReservation>()("ReleaseReservation", {
  owner: Schema.String,
  at: Schema.String
}) {}

export const ReservationCommand = Schema.Union([ClaimReservation, ReleaseReservation])
export type ReservationCommand = typeof ReservationCommand.Type
