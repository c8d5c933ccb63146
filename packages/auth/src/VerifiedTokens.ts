/**
 * A bounded memo of API keys whose signature already verified. Checking an ES256 signature is most of a
 * request's CPU, and a given token string verifies the same way until it expires, so it is checked once per
 * process. Only successes are kept (a forged token can never enter), entries end at the token's `exp`, and the
 * oldest entry goes when the memo is full. Revocation is not cached: callers check it on every request.
 */
import type { ApiKeyClaims } from "./TokenSigner.ts"

export interface VerifiedTokens {
  readonly get: (token: string, nowMillis: number) => ApiKeyClaims | undefined
  readonly remember: (token: string, claims: ApiKeyClaims, expiresAtMillis: number) => void
}

export const make = (capacity = 10_000): VerifiedTokens => {
  const entries = new Map<string, { readonly claims: ApiKeyClaims; readonly expiresAt: number }>()
  return {
    get: (token, nowMillis) => {
      const entry = entries.get(token)
      if (entry === undefined) return undefined
      if (entry.expiresAt <= nowMillis) {
        entries.delete(token)
        return undefined
      }
      return entry.claims
    },
    remember: (token, claims, expiresAt) => {
      if (entries.size >= capacity) entries.delete(entries.keys().next().value!)
      entries.set(token, { claims, expiresAt })
    }
  }
}
