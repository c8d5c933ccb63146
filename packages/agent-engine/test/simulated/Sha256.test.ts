import { assert, describe, it } from "@effect/vitest"
import * as _ from "../../src/simulated/Sha256.ts"

describe("Sha256", () => {
  it("gives the FIPS 180-4 digests of the standard test vectors", () => {
    assert.strictEqual(_.ofText(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    assert.strictEqual(_.ofText("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    assert.strictEqual(
      _.ofText("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
    )
    assert.strictEqual(_.hex(new Uint8Array(1_000_000).fill(0x61)), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
  })

  it("hashes text as its UTF-8 bytes", () => {
    assert.strictEqual(_.ofText("é"), _.hex(new Uint8Array([0xc3, 0xa9])))
  })
})
