import { NoMasterKeys } from "@cairn/auth/node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { build } from "../MasterKeyFixtures.ts"

describe("NoMasterKeys", () => {
  it.effect("has no current key and no key by any id", () =>
    Effect.gen(function*() {
      const keys = yield* build(NoMasterKeys.layer)
      assert.isTrue(Option.isNone(yield* keys.current))
      assert.isTrue(Option.isNone(yield* keys.byId("mk-000000000000")))
    }))

  it.effect("rotating fails saying that no master key is configured and how to configure one", () =>
    Effect.gen(function*() {
      const keys = yield* build(NoMasterKeys.layer)
      const error = yield* Effect.flip(keys.rotate)
      assert.strictEqual(error._tag, "RotationUnsupported")
      assert.include(error.message, "No master key is configured")
      assert.include(error.message, "SECRETS_MASTER_KEY")
      yield* keys.retire
    }))
})
