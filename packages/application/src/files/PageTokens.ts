/**
 * Page tokens for keyset pagination (files, groups): opaque to clients, they are the (createdAt, id) of the last
 * item of the previous page, as base64url JSON. A token Cairn did not issue is refused (400), never guessed at.
 */
import { Option } from "effect"

export interface Cursor {
  readonly createdAt: string
  readonly id: string
}

// The token's JSON is ASCII (an ISO date and an id), so btoa/atob suffice and work on every runtime.
export const encode = (cursor: Cursor) =>
  btoa(JSON.stringify([cursor.createdAt, cursor.id])).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "")

export const decode = (token: string): Option.Option<Cursor> => {
  try {
    const value: unknown = JSON.parse(atob(token.replace(/-/g, "+").replace(/_/g, "/")))
    return Array.isArray(value) && value.length === 2 && typeof value[0] === "string" && typeof value[1] === "string" &&
        !Number.isNaN(Date.parse(value[0]))
      ? Option.some({ createdAt: value[0], id: value[1] })
      : Option.none()
  } catch {
    return Option.none()
  }
}
