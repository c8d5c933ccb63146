import { EngineVersion } from "@cairn/domain"
import { assert, describe, it } from "@effect/vitest"

describe("EngineVersion", () => {
  it("compares CalVer parts as numbers, not as text", () => {
    assert.isTrue(EngineVersion.isOlder("2026.9.1", "2026.10.1"))
    assert.isTrue(EngineVersion.isOlder("2026.3.8", "2026.3.10"))
    assert.isFalse(EngineVersion.isOlder("2027.1.1", "2026.12.31"))
  })

  it("treats equal versions, and a missing part as 0, as the same version", () => {
    assert.strictEqual(EngineVersion.order("2026.4.2", "2026.4.2"), 0)
    assert.strictEqual(EngineVersion.order("2026.4", "2026.4.0"), 0)
  })

  it("sorts pre-releases before their release and by their numbers", () => {
    assert.deepStrictEqual(
      ["2026.3.8", "2026.3.8-beta.10", "2026.3.1", "2026.3.8-beta.2", "2026.3.8-alpha.1"].sort(EngineVersion.order),
      ["2026.3.1", "2026.3.8-alpha.1", "2026.3.8-beta.2", "2026.3.8-beta.10", "2026.3.8"]
    )
  })
})
