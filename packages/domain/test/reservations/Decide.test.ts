import { Reservation } from "@cairn/domain"
import { describe, it } from "@effect/vitest"
import { given } from "../DeciderSpec.ts"

const at = "2026-11-22T10:00:00.000Z"
const claimed = (owner: string) => new Reservation.ReservationClaimed({ owner, at })

describe("a reservation", () => {
  it("is claimed by the first owner and refused to any other until released", () => {
    given(Reservation.decider).when(new Reservation.ClaimReservation({ owner: "s1", at })).then([claimed("s1")])
    given(Reservation.decider, [claimed("s1")]).when(new Reservation.ClaimReservation({ owner: "s2", at }))
      .thenFails(new Reservation.ReservationTaken({ owner: "s1" }))
    const released = new Reservation.ReservationReleased({ owner: "s1", at })
    given(Reservation.decider, [claimed("s1")]).when(new Reservation.ReleaseReservation({ owner: "s1", at })).then([released])
    given(Reservation.decider, [claimed("s1"), released]).when(new Reservation.ClaimReservation({ owner: "s2", at })).then([claimed("s2")])
  })

  it("records nothing when its owner claims it again, or when someone else releases it", () => {
    given(Reservation.decider, [claimed("s1")]).when(new Reservation.ClaimReservation({ owner: "s1", at })).then([])
    given(Reservation.decider, [claimed("s1")]).when(new Reservation.ReleaseReservation({ owner: "s2", at })).then([])
  })
})
