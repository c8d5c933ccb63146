/**
 * The SignatureVerifier port for keys (externally owned accounts): recovers the signer of the EIP-712
 * "Sign Content" typed data with viem and compares it with the claimed address. It is pure computation with no
 * network, so it runs anywhere and is Cairn's default. Malformed input is not an error, only a signature that
 * does not verify. viem is loaded at the first verification, not at start: it is a large library (about 400
 * modules) that a server needs only when someone signs.
 */
import { Effect, Layer } from "effect"
import { domain, primaryType, type SignedContent, SignatureVerifier, types } from "./SignatureVerifier.ts"

let viem: Promise<typeof import("viem")> | undefined

/** viem, imported once, on first use. */
export const loadViem = () => (viem ??= import("viem"))

/** True when the key behind `content.address` signed `{address, cid, date}`; false for anything else. */
export const verify = Effect.fn("EoaSignatureVerifier.verify")(function*(content: SignedContent) {
  const { isAddress, isHex, verifyTypedData } = yield* Effect.promise(loadViem)
  const { address, cid, date, signature } = content
  // viem throws on these too, but checking first narrows the strings to its `0x` types without a cast.
  // `isAddress` is strict: a mixed-case address must carry a valid EIP-55 checksum.
  if (!isAddress(address) || !isHex(signature)) return false
  // Recovery throws on a signature of the wrong length or with an impossible point; that is "invalid", not a defect.
  return yield* Effect.tryPromise(() =>
    verifyTypedData({ address, domain, types, primaryType, message: { address, cid, date }, signature })
  ).pipe(Effect.orElseSucceed(() => false))
})

export const make = Effect.succeed(SignatureVerifier.of({ verify }))

export const layer = Layer.effect(SignatureVerifier, make)
