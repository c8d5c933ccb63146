/**
 * Signed URLs: what a private access link (`POST /v3/files/private/download_link`) and a presigned upload
 * (`POST /v3/files/sign`) grant, the rules their `date` and `expires` follow, which mime types an upload's terms
 * allow, and why a signed URL is refused. A presigned upload is good for one upload: its use is a reservation
 * (`reservation-signed-upload-<id>`), claimed by the upload's file in the append that records it, so two uploads
 * racing on one URL (on one node or two) cannot both be recorded.
 */
import { Result, Schema } from "effect"
import { KeyValues } from "./files/Events.ts"
import { Network } from "./Network.ts"
import { ValidationFailed } from "./ValidationFailed.ts"

/** The longest a signed URL may be valid for: one year. */
export const maxExpiresSeconds = 365 * 24 * 60 * 60

/** How far in the future a client's `date` may lie (its clock running ahead of ours). */
export const maxClockSkewSeconds = 5 * 60

/** What a private access link allows: GETting one CID's private content. */
export const LinkTerms = Schema.Struct({
  cid: Schema.String,
  method: Schema.Literal("GET")
})
export type LinkTerms = typeof LinkTerms.Type

/** What a presigned upload allows: one upload, within these limits, recorded with this metadata. */
export const UploadTerms = Schema.Struct({
  /** The network the upload goes to; when the signer named none, the one the upload asks for. */
  network: Schema.optionalKey(Network),
  /** In bytes: a larger upload is 413. */
  maxFileSize: Schema.optionalKey(Schema.Number),
  /** Mime types (`image/png`, `image/*`, `*\/*`; `directory` for a folder): another is 400. None: anything. */
  allowMimeTypes: Schema.optionalKey(Schema.Array(Schema.String)),
  groupId: Schema.optionalKey(Schema.String),
  /** The file's name; when the signer named none, the uploaded file's own. */
  filename: Schema.optionalKey(Schema.String),
  keyvalues: Schema.optionalKey(KeyValues)
})
export type UploadTerms = typeof UploadTerms.Type

/** The reservation that records a presigned upload's one use. */
export const useReservation = (grantId: string) => `reservation-signed-upload-${grantId}`

/**
 * When a signed URL stops working, in seconds since the epoch: `date` (when it was signed, by the client's clock)
 * plus `expires`. Refused: `expires` out of 1 second to a year, a `date` further ahead of `now` than clock skew
 * explains, and a URL that would be born expired.
 */
export const expiryOf = (input: { readonly date: number; readonly expires: number; readonly nowSeconds: number }) => {
  const { date, expires, nowSeconds } = input
  if (!Number.isInteger(expires) || expires < 1 || expires > maxExpiresSeconds) {
    return Result.fail(new ValidationFailed({ detail: `expires must be a whole number of seconds from 1 to ${maxExpiresSeconds}` }))
  }
  if (!Number.isInteger(date) || date < 0) {
    return Result.fail(new ValidationFailed({ detail: "date must be a Unix time in whole seconds" }))
  }
  if (date > nowSeconds + maxClockSkewSeconds) {
    return Result.fail(new ValidationFailed({ detail: "date is in the future: give the Unix time (in seconds) of signing" }))
  }
  if (date + expires <= nowSeconds) {
    return Result.fail(new ValidationFailed({ detail: "date + expires is already past: the URL would never work" }))
  }
  return Result.succeed(date + expires)
}

/** A mime type without its parameters, lowercased: `text/plain; charset=utf-8` is `text/plain`. */
export const essence = (mimeType: string) => mimeType.split(";")[0]!.trim().toLowerCase()

/**
 * Whether an upload's terms allow this mime type (`directory` for a folder): an exact type, `type/*`, or `*\/*`,
 * compared without parameters and case. Terms with no list allow everything.
 */
export const allows = (terms: UploadTerms, mimeType: string) => {
  if (terms.allowMimeTypes === undefined) return true
  const type = essence(mimeType)
  return terms.allowMimeTypes.some((allowed) => {
    const pattern = essence(allowed)
    if (pattern === "*/*" || pattern === "*") return type !== "directory"
    return pattern.endsWith("/*") ? type.startsWith(pattern.slice(0, -1)) : pattern === type
  })
}

/** Why a signed URL was refused, as the response's `reason`. */
export const RefusalReason = Schema.Literals([
  "malformed",
  "bad-signature",
  "expired",
  "other-content",
  "other-method",
  "used",
  "key-revoked"
])
export type RefusalReason = typeof RefusalReason.Type

const refusals: Readonly<Record<RefusalReason, string>> = {
  malformed: "Signed URL refused: it is not a URL this service signed (a parameter is missing or malformed)",
  "bad-signature": "Signed URL refused: its signature does not match (it was altered, or signed by someone else)",
  expired: "Signed URL refused: it has expired",
  "other-content": "Signed URL refused: it was signed for other content",
  "other-method": "Signed URL refused: it was signed for another method",
  used: "Signed URL refused: it has already been used",
  "key-revoked": "Signed URL refused: the API key that signed it has been revoked"
}

/** A signed URL that does not (or no longer) grant what it is used for: 403 with the reason. */
export class SignedUrlRefused extends Schema.TaggedError<SignedUrlRefused>()("SignedUrlRefused", { reason: RefusalReason }) {
  readonly status = 403
  override get message() {
    return refusals[this.reason]
  }
  get details() {
    return { reason: this.reason }
  }
}

/** A presigned upload over its terms' `maxFileSize`: 413 `File too large`, with the limit. */
export class OverSignedLimit extends Schema.TaggedError<OverSignedLimit>()("OverSignedLimit", { maxFileSize: Schema.Number }) {
  readonly status = 413
  override readonly message = "File too large"
  get details() {
    return { max_file_size: this.maxFileSize }
  }
}
