import { domain, EoaSignatureVerifier, primaryType, type SignedContent, SignatureVerifier, types } from "@cairn/signatures"
import { assert, describe, it, layer } from "@effect/vitest"
import { Arbitrary, Effect, Schema } from "effect"
import { concat, encodeAbiParameters, hashTypedData, keccak256, numberToHex, recoverAddress, toHex } from "viem"
import { generatePrivateKey } from "viem/accounts"
import { malformed, notFromAKey, sign, tamper, vector, vectorKey } from "./Fixtures.ts"

describe("the pinned vector", () => {
  it("is what the fixed key signs for Pinata's documented CID and date", async () => {
    const signed = await sign(vectorKey, vector.cid, vector.date)
    assert.deepStrictEqual(signed, vector)
  })

  it("signs the EIP-712 digest built by hand from Pinata's type strings", async () => {
    const bytes32 = { type: "bytes32" } as const
    const domainHash = keccak256(encodeAbiParameters([bytes32, bytes32, bytes32, { type: "uint256" }], [
      keccak256(toHex("EIP712Domain(string name,string version,uint256 chainId)")),
      keccak256(toHex("Sign Content")),
      keccak256(toHex("1.0.0")),
      1n
    ]))
    const { address } = vector
    const structHash = keccak256(encodeAbiParameters([bytes32, { type: "address" }, bytes32, bytes32], [
      keccak256(toHex("Sign(address address,string cid,string date)")),
      address,
      keccak256(toHex(vector.cid)),
      keccak256(toHex(vector.date))
    ]))
    const digest = keccak256(concat(["0x1901", domainHash, structHash]))
    assert.strictEqual(hashTypedData({ domain, types, primaryType, message: { address, cid: vector.cid, date: vector.date } }), digest)
    assert.strictEqual(await recoverAddress({ hash: digest, signature: vector.signature }), vector.address)
  })
})

const secp256k1Order = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n
const PrivateKey = Arbitrary.schema(Schema.BigInt.check(Schema.isBetweenBigInt({ minimum: 1n, maximum: secp256k1Order - 1n })))
  .pipe(Arbitrary.map((key) => numberToHex(key, { size: 32 })))
// Well-formed only: a lone surrogate is encoded as U+FFFD, so two such strings can be one message.
const Cid = Arbitrary.schema(Schema.String).pipe(Arbitrary.filter((cid) => cid.isWellFormed()))
// Any instant from 1970 to 2100, in the form Cairn signs: `toISOString`, with milliseconds.
const IsoDate = Arbitrary.schema(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: Date.UTC(2100, 0) })))
  .pipe(Arbitrary.map((millis) => new Date(millis).toISOString()))
// An array, not `Arbitrary.all([arbitrary, arbitrary])`: on effect 4.1.0 the latter kept regenerating the pair of
// empty strings it had just discarded until the check gave up.
const twoDifferent = <A>(arbitrary: Arbitrary.Arbitrary<A>) =>
  Arbitrary.array(arbitrary, { minLength: 2, maxLength: 2 }).pipe(Arbitrary.filter(([a, b]) => a !== b))
// Bytes 0-63 are r and s. Byte 64 is v, where 0x1b and 0x00 (or 0x1c and 0x01) are the same recovery id in two
// spellings, so flipping bits there can leave the signature valid; the pinned vector covers v below.
const RsByte = Arbitrary.schema(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 63 })))
const BitMask = Arbitrary.schema(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 255 })))

layer(EoaSignatureVerifier.layer)("EoaSignatureVerifier", (it) => {
  const verify = (content: SignedContent) => SignatureVerifier.use((verifier) => verifier.verify(content))

  it.effect("accepts the pinned vector", () =>
    Effect.gen(function*() {
      assert.isTrue(yield* verify(vector))
    }))

  it.effect("accepts the signer's address in lowercase: an address is bytes, its case only a checksum", () =>
    Effect.gen(function*() {
      assert.isTrue(yield* verify({ ...vector, address: vector.address.toLowerCase() }))
    }))

  it.effect("rejects the pinned vector with another CID, date or address", () =>
    Effect.gen(function*() {
      assert.isFalse(yield* verify({ ...vector, cid: "bafkreih5aznjvttude6c3wbvqeebb6rlx5wkbzyppv7garjiubll2ceym5" }))
      assert.isFalse(yield* verify({ ...vector, date: "2024-07-29T18:29:47.356Z" }))
      // The same instant without milliseconds is another string, so another message.
      assert.isFalse(yield* verify({ ...vector, date: "2024-07-29T18:29:47Z" }))
      assert.isFalse(yield* verify({ ...vector, address: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8" }))
    }))

  it.effect("rejects a signature another key made of the same message", () =>
    Effect.gen(function*() {
      const byAnotherKey = yield* Effect.promise(() => sign(generatePrivateKey(), vector.cid, vector.date))
      assert.isFalse(yield* verify({ ...vector, signature: byAnotherKey.signature }))
    }))

  it.effect("rejects the pinned vector with one bit flipped in r, in s or in the recovery id", () =>
    Effect.gen(function*() {
      assert.isFalse(yield* verify({ ...vector, signature: tamper(vector.signature, 0, 0x01) }))
      assert.isFalse(yield* verify({ ...vector, signature: tamper(vector.signature, 63, 0x80) }))
      assert.isFalse(yield* verify({ ...vector, signature: tamper(vector.signature, 64, 0x1b ^ 0x1c) }))
    }))

  it.effect.each([...malformed, ...notFromAKey])("rejects $name as invalid, without failing", ({ content }) =>
    Effect.gen(function*() {
      assert.isFalse(yield* verify(content))
    }))

  it.effect.prop(
    "a signature verifies for its signer, CID and date, and for no other signer, CID, date or signature bytes",
    { keys: twoDifferent(PrivateKey), cids: twoDifferent(Cid), dates: twoDifferent(IsoDate), byte: RsByte, mask: BitMask },
    ({ keys: [key, otherKey], cids: [cid, otherCid], dates: [date, otherDate], byte, mask }) =>
      Effect.gen(function*() {
        const signed = yield* Effect.promise(() => sign(key, cid, date))
        const byOtherKey = yield* Effect.promise(() => sign(otherKey, cid, date))
        assert.isTrue(yield* verify(signed))
        assert.isFalse(yield* verify({ ...signed, address: byOtherKey.address }))
        assert.isFalse(yield* verify({ ...signed, cid: otherCid }))
        assert.isFalse(yield* verify({ ...signed, date: otherDate }))
        assert.isFalse(yield* verify({ ...signed, signature: tamper(signed.signature, byte, mask) }))
        assert.isFalse(yield* verify({ ...signed, signature: byOtherKey.signature }))
      }),
    { arbitrary: { runs: 30 } }
  )
})
