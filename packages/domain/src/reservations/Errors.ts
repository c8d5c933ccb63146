/** The key is held by another owner. Services map this onto their documented error (`Duplicate secret name`). */
import { Schema } from "effect"

export class ReservationTaken extends Schema.TaggedError<ReservationTaken>()("ReservationTaken", { owner: Schema.String }) {
  readonly status = 409
  override readonly message = "Already taken"
}
