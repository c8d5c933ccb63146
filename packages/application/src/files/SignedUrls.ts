/**
 * Signed URLs: private access links (a GET of one CID's private content, for anyone holding the link, until it
 * expires) and presigned uploads (one upload into the signing workspace, within limits, without an API key). A URL
 * carries a grant signed with the installation's signing key (TokenSigner), so any node verifies it and nothing is
 * stored when one is made. Every use checks the grant's signature, purpose and expiry, and reads the standing of the
 * API key that signed it (a revoked key's URLs stop working); a link also needs its workspace to still hold the CID
 * privately, and a presigned upload must not have been used (its use is a reservation: SignedUrl.ts, Files.ts).
 */
import { type Grant, TokenSigner } from "@cairn/auth"
import { CidRecord, File, Reservation, SignedUrl } from "@cairn/domain"
import { Clock, Context, Effect, Layer, Schema } from "effect"
import type { Principal } from "../Access.ts"
import { CommandHandler } from "../CommandHandler.ts"
import { ApiKeys } from "../workspaces/ApiKeys.ts"
import { Files } from "./Files.ts"

/**
 * A signed URL as it was presented: its signature (the grant's token), and the `date`, `expires` and method it
 * shows (each, when shown, must be the grant's own).
 */
export interface PresentedUrl {
  readonly token: string
  readonly date: string | undefined
  readonly expires: string | undefined
  readonly method: string | undefined
}

/** The method each kind of signed URL is for, as its URL shows it. */
const methodOf: Readonly<Record<Grant["purpose"], string>> = { download: "GET", upload: "POST" }

/** The validity a client asks for: Unix seconds of signing, and seconds from then. */
export interface Validity {
  readonly date: number
  readonly expires: number
}

const decodeLinkTerms = Schema.decodeUnknownEffect(SignedUrl.LinkTerms)
const decodeUploadTerms = Schema.decodeUnknownEffect(SignedUrl.UploadTerms)

const refused = (reason: SignedUrl.RefusalReason) => new SignedUrl.SignedUrlRefused({ reason })

export class SignedUrls extends Context.Service<SignedUrls>()("cairn/SignedUrls", {
  make: Effect.gen(function*() {
    const signer = yield* TokenSigner
    const keys = yield* ApiKeys
    const files = yield* Files
    const commands = yield* CommandHandler

    /** When a URL signed at `date` for `expires` seconds stops working (400 for a window that cannot be). */
    const expiryOf = ({ date, expires }: Validity) =>
      Effect.flatMap(Clock.currentTimeMillis, (millis) =>
        Effect.fromResult(SignedUrl.expiryOf({ date, expires, nowSeconds: Math.floor(millis / 1000) })))

    const issue = (principal: Principal, purpose: Grant["purpose"], validity: Validity, expiresAt: number, terms: Grant["terms"]) =>
      Effect.gen(function*() {
        const grant: Grant = {
          purpose,
          grantId: crypto.randomUUID(),
          workspaceId: principal.workspaceId,
          userId: principal.userId,
          keyId: principal.keyId,
          issuedAt: validity.date,
          expiresAt,
          terms
        }
        return { grant, token: yield* signer.issueGrant(grant) }
      })

    /**
     * The grant a presented URL carries, if it verifies for this purpose and the `date`, `expires` and method the URL
     * shows are the grant's own (a URL whose shown expiry was edited is refused, not trusted).
     */
    const verified = (presented: PresentedUrl, purpose: Grant["purpose"]) =>
      Effect.gen(function*() {
        const grant = yield* signer.verifyGrant(presented.token, purpose).pipe(
          Effect.mapError((invalid) =>
            refused(invalid.reason === "expired" ? "expired" : invalid.reason === "malformed" ? "malformed" : "bad-signature"))
        )
        if (presented.date !== undefined && presented.date !== String(grant.issuedAt)) return yield* refused("bad-signature")
        if (presented.expires !== undefined && presented.expires !== String(grant.expiresAt - grant.issuedAt)) return yield* refused("bad-signature")
        if (presented.method !== undefined && presented.method !== methodOf[purpose]) return yield* refused("bad-signature")
        return grant
      })

    /** The signer's principal, if its key still stands (no scopes: a grant allows only what its terms say). */
    const principalOf = (grant: Grant) =>
      keys.admitClaims({ userId: grant.userId, workspaceId: grant.workspaceId, keyId: grant.keyId, scopes: [] }).pipe(
        Effect.mapError((refusal) => refused(refusal._tag === "Unauthorized" && refusal.reason === "revoked" ? "key-revoked" : "bad-signature"))
      )

    /**
     * A link to one CID's private content, for GET. With `requireHeld`, the workspace must hold the CID privately
     * now (404 `File not found`); without, it is only checked when the link is used.
     */
    const signLink = Effect.fn("SignedUrls.signLink")(function*(
      principal: Principal,
      input: Validity & { readonly cid: string; readonly requireHeld: boolean }
    ) {
      const expiresAt = yield* expiryOf(input)
      if (input.requireHeld && !(yield* files.holds(principal.workspaceId, "private", input.cid))) {
        return yield* new File.FileNotFound({ fileId: input.cid })
      }
      const terms: SignedUrl.LinkTerms = { cid: input.cid, method: "GET" }
      return yield* issue(principal, "download", input, expiresAt, terms)
    })

    /**
     * The principal a link acts for, when it grants this request: a GET (or HEAD) of the CID it was signed for, still
     * held privately by its workspace (404 `Content not found` once it is not).
     */
    const openLink = Effect.fn("SignedUrls.openLink")(function*(presented: PresentedUrl, request: { readonly cid: string; readonly method: string }) {
      const grant = yield* verified(presented, "download")
      const terms = yield* decodeLinkTerms(grant.terms).pipe(Effect.mapError(() => refused("malformed")))
      if (terms.cid !== request.cid) return yield* refused("other-content")
      if (request.method !== "GET" && request.method !== "HEAD") return yield* refused("other-method")
      const principal = yield* principalOf(grant)
      if (!(yield* files.holds(principal.workspaceId, "private", request.cid))) return yield* new CidRecord.ContentNotPublic({ cid: request.cid })
      return principal
    })

    /** A presigned upload: one upload into the signer's workspace, within `terms`. */
    const signUpload = Effect.fn("SignedUrls.signUpload")(function*(principal: Principal, input: Validity & { readonly terms: SignedUrl.UploadTerms }) {
      const expiresAt = yield* expiryOf(input)
      return yield* issue(principal, "upload", input, expiresAt, input.terms)
    })

    /**
     * What a presented upload URL allows, before its body is read: its grant (whose id must be the one in the URL's
     * path), terms and principal; refused once an upload through it was recorded. The use itself is claimed when the
     * upload is recorded (Files' `singleUse`), which a concurrent upload cannot also do.
     */
    const openUpload = Effect.fn("SignedUrls.openUpload")(function*(presented: PresentedUrl, grantId: string) {
      const grant = yield* verified(presented, "upload")
      if (grant.grantId !== grantId) return yield* refused("bad-signature")
      const terms = yield* decodeUploadTerms(grant.terms).pipe(Effect.mapError(() => refused("malformed")))
      const principal = yield* principalOf(grant)
      const use = yield* commands.load(Reservation.decider, SignedUrl.useReservation(grant.grantId))
      if (use.state._tag === "Held") return yield* refused("used")
      return { principal, terms, grantId: grant.grantId }
    })

    return { signLink, openLink, signUpload, openUpload }
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
