/**
 * How a signed URL carries its grant, in the shape of Pinata's: `X-Algorithm` (ES256), `X-Date` (Unix seconds of
 * signing), `X-Expires` (seconds from then), `X-Method`, and `X-Signature`, the grant itself as a compact JWT
 * signed with the installation's key (so every node verifies it). The date, expiry and method are shown for people
 * and tools reading the URL; the signature is what counts, and a URL that shows other values than its grant holds is
 * refused (SignedUrls.ts).
 */
import type { PresentedUrl } from "@cairn/application"
import type { Grant } from "@cairn/auth"
import { SignedUrl } from "@cairn/domain"
import { Effect } from "effect"

/** The query parameters a signed URL's grant adds to it. */
export const names = ["X-Algorithm", "X-Date", "X-Expires", "X-Method", "X-Signature"] as const

/** Whether a URL's query carries a signature: it is to be judged as a signed URL, whatever else it holds. */
export const isSigned = (query: URLSearchParams) => query.has("X-Signature")

/** `query` with the grant's parameters added (any the client had put there replaced). */
export const withGrant = (query: URLSearchParams, grant: Grant, token: string, method: string) => {
  const signed = new URLSearchParams(query)
  for (const name of names) signed.delete(name)
  signed.set("X-Algorithm", "ES256")
  signed.set("X-Date", String(grant.issuedAt))
  signed.set("X-Expires", String(grant.expiresAt - grant.issuedAt))
  signed.set("X-Method", method)
  signed.set("X-Signature", token)
  return signed
}

/** The signed URL a request presents, from its query: refused (`malformed`) without a signature. */
export const read = (query: URLSearchParams): Effect.Effect<PresentedUrl, SignedUrl.SignedUrlRefused> => {
  const token = query.get("X-Signature")
  if (token === null || token === "") return Effect.fail(new SignedUrl.SignedUrlRefused({ reason: "malformed" }))
  const shown = (name: string) => query.get(name) ?? undefined
  return Effect.succeed({ token, date: shown("X-Date"), expires: shown("X-Expires"), method: shown("X-Method") })
}
