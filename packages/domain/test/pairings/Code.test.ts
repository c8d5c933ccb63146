import { ChannelPairing, ValidationFailed } from "@cairn/domain"
import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"

describe("a pairing code", () => {
  it("is taken in any case and compared in upper case, as OpenClaw compares it", () =>
    assert.deepStrictEqual(ChannelPairing.requirePairingCode("ab3dEF7h"), Result.succeed("AB3DEF7H")))

  it("is refused unless it is 4 to 16 letters or digits, so nothing else reaches the engine", () => {
    for (const code of ["", "abc", "A".repeat(17), "ABCD 234", "ABCD-234", "ABC;rm -rf /", "$(id)xx", "ÄBCD2345", "ABCD\n234", "../ABCDE"]) {
      const result = ChannelPairing.requirePairingCode(code)
      assert.isTrue(Result.isFailure(result), code)
      assert.instanceOf(Result.isFailure(result) ? result.failure : undefined, ValidationFailed)
    }
  })
})
