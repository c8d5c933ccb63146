/**
 * An API key as its history leaves it: not issued, active, or revoked (its issue record and the uses it counted
 * kept either way).
 */
import type { ApiKeyIssued } from "./Events.ts"

export type ApiKeyState =
  | { readonly _tag: "NoKey" }
  | { readonly _tag: "Active"; readonly issued: ApiKeyIssued; readonly uses: number }
  | { readonly _tag: "Revoked"; readonly issued: ApiKeyIssued; readonly uses: number }

export const initial: ApiKeyState = { _tag: "NoKey" }
