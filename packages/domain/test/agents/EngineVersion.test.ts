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

describe("an update tag", () => {
  const offered = ["2026.3.8", "2026.10.1-beta.2", "2026.9.6", "2026.9.5"]
  it("latest is the newest release, beta the newest of all, a version itself when offered", () => {
    assert.strictEqual(EngineVersion.resolveTag("latest", offered), "2026.9.6")
    assert.strictEqual(EngineVersion.resolveTag("beta", offered), "2026.10.1-beta.2")
    assert.strictEqual(EngineVersion.resolveTag("2026.9.5", offered), "2026.9.5")
    assert.isUndefined(EngineVersion.resolveTag("2026.1.1", offered))
    assert.isUndefined(EngineVersion.resolveTag("latest", []))
    assert.strictEqual(EngineVersion.latestRelease(["2026.10.1-beta.2"]), "2026.10.1-beta.2")
  })
})
