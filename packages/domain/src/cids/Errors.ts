/** Why a CID command was refused: the signature rules, each with its status and exact string. */
import { Schema } from "effect"

/** The workspace must hold a live file of the CID and have uploaded it first; and only the signer may unsign. */
export class CidNotOwned extends Schema.TaggedError<CidNotOwned>()("CidNotOwned", { cid: Schema.String }) {
  readonly status = 403
  override readonly message = "CID not owned by this workspace: it must hold the file and have uploaded it first"
}

/** A CID is signed once; the signature must be removed before another is added. */
export class CidAlreadySigned extends Schema.TaggedError<CidAlreadySigned>()("CidAlreadySigned", { cid: Schema.String }) {
  readonly status = 409
  override readonly message = "CID already has a signature"
}

export class SignatureNotFound extends Schema.TaggedError<SignatureNotFound>()("SignatureNotFound", { cid: Schema.String }) {
  readonly status = 404
  override readonly message = "Signature not found"
}

export class SignatureDoesNotVerify extends Schema.TaggedError<SignatureDoesNotVerify>()("SignatureDoesNotVerify", {
  cid: Schema.String
}) {
  readonly status = 400
  override readonly message = "Validation failed: signature does not verify for this address, CID and upload date"
}

export type CidError = CidNotOwned | CidAlreadySigned | SignatureNotFound | SignatureDoesNotVerify

/** The public gateway serves only CIDs some workspace holds on the public network; any other is simply not there. */
export class ContentNotPublic extends Schema.TaggedError<ContentNotPublic>()("ContentNotPublic", { cid: Schema.String }) {
  readonly status = 404
  override readonly message = "Content not found"
}
