/** A reservation is free, or held by one owner. */
export type ReservationState =
  | { readonly _tag: "Free" }
  | { readonly _tag: "Held"; readonly owner: string }

export const initial: ReservationState = { _tag: "Free" }
