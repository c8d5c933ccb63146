import { DiskSpace } from "@cairn/domain"
import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"

const GiB = 1024 ** 3
const MiB = 1024 ** 2

/** What the rule says of a write: "allowed", or the refusal's numbers. */
const verdict = (freeBytes: number, reserveBytes: number, bytes: number) => {
  const result = DiskSpace.check({ freeBytes, reserveBytes }, bytes)
  if (Result.isSuccess(result)) return "allowed"
  const { _tag, freeBytes: free, reserveBytes: reserve, bytes: adding } = result.failure
  return { _tag, freeBytes: free, reserveBytes: reserve, bytes: adding }
}

describe("the disk reserve", () => {
  it("allows a write that leaves more than the reserve free", () => {
    assert.strictEqual(verdict(10 * GiB, GiB, 100 * MiB), "allowed")
    assert.strictEqual(verdict(GiB + 1, GiB, 0), "allowed")
  })

  it("refuses a write whose declared size would eat into the reserve, with the numbers for the log", () => {
    assert.deepStrictEqual(verdict(GiB + 50 * MiB, GiB, 100 * MiB), { _tag: "InsufficientStorage", freeBytes: GiB + 50 * MiB, reserveBytes: GiB, bytes: 100 * MiB })
    // Exactly the reserve left is not above it.
    assert.notStrictEqual(verdict(GiB + MiB, GiB, MiB), "allowed")
  })

  it("refuses a write of unknown size once the free bytes are down to the reserve", () => {
    assert.notStrictEqual(verdict(GiB, GiB, 0), "allowed")
    assert.notStrictEqual(verdict(10 * MiB, GiB, 0), "allowed")
    // A negative size counts as unknown, never as room given back.
    assert.notStrictEqual(verdict(GiB, GiB, -5 * GiB), "allowed")
  })

  it("allows everything when the reserve is 0 (turned off)", () => {
    assert.strictEqual(verdict(0, 0, 100 * GiB), "allowed")
    assert.strictEqual(verdict(10 * MiB, 0, 0), "allowed")
  })

  it("answers 507 Insufficient storage", () => {
    const error = new DiskSpace.InsufficientStorage({ freeBytes: 0, reserveBytes: GiB, bytes: 0 })
    assert.strictEqual(error.status, 507)
    assert.strictEqual(error.message, "Insufficient storage")
  })
})
