/** Folds one API key event into the key's state; a use or a revocation of a key that is not active changes nothing. */
import { Match } from "effect"
import type { ApiKeyEvent } from "./Events.ts"
import type { ApiKeyState } from "./State.ts"

export const evolve = (state: ApiKeyState, event: ApiKeyEvent): ApiKeyState =>
  Match.valueTags(event, {
    ApiKeyIssued: (issued): ApiKeyState => ({ _tag: "Active", issued, uses: 0 }),
    ApiKeyUsed: (): ApiKeyState => (state._tag === "Active" ? { ...state, uses: state.uses + 1 } : state),
    ApiKeyRevoked: (): ApiKeyState => (state._tag === "Active" ? { _tag: "Revoked", issued: state.issued, uses: state.uses } : state)
  })
