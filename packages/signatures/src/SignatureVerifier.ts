/**
 * Verifies wallet signatures of CIDs: EIP-712 typed data in the exact form Pinata documents (domain
 * "Sign Content" 1.0.0 on chain 1, primary type `Sign {address, cid, date}`). Adapters: EoaSignatureVerifier
 * (recovers the signer; pure, runs anywhere) and Eip1271SignatureVerifier (asks a contract wallet on chain
 * through an RPC endpoint; off unless configured).
 */
import { Context, type Effect, Schema } from "effect"

export const domain = { name: "Sign Content", version: "1.0.0", chainId: 1 } as const

export const types = {
  Sign: [
    { name: "address", type: "address" },
    { name: "cid", type: "string" },
    { name: "date", type: "string" }
  ]
} as const

export const primaryType = "Sign"

export interface SignedContent {
  /** 0x-prefixed, 20 bytes. */
  readonly address: string
  readonly cid: string
  /** The file's first upload time as ISO-8601 with milliseconds (`Date.prototype.toISOString`). */
  readonly date: string
  /** 0x-prefixed hex. */
  readonly signature: string
}

/** The verifier could not reach what it needed (an RPC endpoint); not the same as "invalid". */
export class VerifierUnavailable extends Schema.TaggedError<VerifierUnavailable>()("VerifierUnavailable", {
  cause: Schema.Defect()
}) {
  /** Clients get 503 Service unavailable; the cause goes to the log (see @cairn/domain DocumentedError). */
  readonly unavailable = true
  override get message() {
    return "Signature verifier unavailable"
  }
}

export class SignatureVerifier extends Context.Service<SignatureVerifier, {
  /** True when `signature` is `address`'s EIP-712 signature of `{address, cid, date}`. */
  readonly verify: (content: SignedContent) => Effect.Effect<boolean, VerifierUnavailable>
}>()("cairn/SignatureVerifier") {}
