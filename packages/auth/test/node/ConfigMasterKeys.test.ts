import { ConfigMasterKeys } from "@cairn/auth/node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option, Redacted } from "effect"
import { build, configuredKey, roundTrip, withConfig } from "../MasterKeyFixtures.ts"

const make = (current: string, previous: ReadonlyArray<string> = []) =>
  ConfigMasterKeys.make({ current: Redacted.make(current), previous: previous.map((key) => Redacted.make(key)) })

describe("ConfigMasterKeys", () => {
  it.effect("the current key and the previous ones are found by their fingerprint ids", () =>
    Effect.gen(function*() {
      const current = configuredKey()
      const older = configuredKey()
      const oldest = configuredKey()
      const keys = yield* make(current.base64, [older.base64, oldest.base64])
      assert.strictEqual(Option.getOrThrow(yield* keys.current).id, current.id)
      for (const { id } of [current, older, oldest]) {
        assert.strictEqual(Option.getOrThrow(yield* keys.byId(id)).id, id)
      }
      assert.isTrue(Option.isNone(yield* keys.byId(configuredKey().id)))
      assert.strictEqual(keys.source, "SECRETS_MASTER_KEY and 2 previous key(s) in SECRETS_MASTER_KEY_PREVIOUS")
    }))

  it.effect("the keys are non-extractable AES-GCM 256 keys that wrap and unwrap a data key", () =>
    Effect.gen(function*() {
      const current = configuredKey()
      const older = configuredKey()
      const keys = yield* make(current.base64, [older.base64])
      const key = Option.getOrThrow(yield* keys.current)
      assert.isFalse(key.key.extractable)
      assert.deepStrictEqual({ ...key.key.algorithm }, { name: "AES-GCM", length: 256 } as object)
      assert.sameMembers([...key.key.usages], ["encrypt", "decrypt"])
      const { dataKey, unwrapped, wrapped } = yield* roundTrip(key)
      assert.deepStrictEqual(unwrapped, dataKey)
      assert.notDeepEqual(wrapped.subarray(0, 32), dataKey)
      const previous = Option.getOrThrow(yield* keys.byId(older.id))
      assert.isTrue(yield* Effect.isFailure(roundTrip(key, previous)), "a different key cannot unwrap")
    }))

  it.effect("the same key gets the same id on every start", () =>
    Effect.gen(function*() {
      const { base64, id } = configuredKey()
      const first = Option.getOrThrow(yield* (yield* make(base64)).current)
      const again = Option.getOrThrow(yield* (yield* make(`${base64}\n`)).current)
      assert.strictEqual(first.id, id)
      assert.strictEqual(again.id, id)
      const { dataKey, unwrapped } = yield* roundTrip(first, again)
      assert.deepStrictEqual(unwrapped, dataKey)
    }))

  it.effect("rotate fails with RotationUnsupported saying which variables to set; retire does nothing", () =>
    Effect.gen(function*() {
      const current = configuredKey()
      const older = configuredKey()
      const keys = yield* make(current.base64, [older.base64])
      const error = yield* Effect.flip(keys.rotate)
      assert.strictEqual(error._tag, "RotationUnsupported")
      assert.include(error.message, "SECRETS_MASTER_KEY to a new key")
      assert.include(error.message, "SECRETS_MASTER_KEY_PREVIOUS to the old one")
      yield* keys.retire
      assert.isTrue(Option.isSome(yield* keys.byId(older.id)), "retire keeps configured keys")
    }))

  it.effect("a key that is not base64 of exactly 32 bytes fails naming the variable, never echoing the value", () =>
    Effect.gen(function*() {
      const valid = configuredKey().base64
      const candidates = [
        "not-base64-top-secret-material!",
        Buffer.alloc(31, 7).toString("base64"),
        Buffer.alloc(33, 7).toString("base64"),
        valid.replace(/=$/, ""),
        `${valid}${valid}`,
        Buffer.alloc(32, 7).toString("hex")
      ]
      for (const value of candidates) {
        const error = yield* Effect.flip(make(value))
        assert.strictEqual(error._tag, "InvalidMasterKey")
        assert.strictEqual(error.source, "SECRETS_MASTER_KEY")
        assert.include(error.message, "32")
        for (const shown of [error.message, String(error), JSON.stringify(error)]) assert.notInclude(shown, value)
      }
    }))

  it.effect("a bad previous key is refused naming its place in SECRETS_MASTER_KEY_PREVIOUS", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(make(configuredKey().base64, [configuredKey().base64, "c2VjcmV0"]))
      assert.strictEqual(error.source, "SECRETS_MASTER_KEY_PREVIOUS (key 2 of 2)")
      assert.notInclude(error.message, "c2VjcmV0")
    }))

  it.effect("layerConfig reads SECRETS_MASTER_KEY and a comma-separated SECRETS_MASTER_KEY_PREVIOUS", () =>
    Effect.gen(function*() {
      const current = configuredKey()
      const older = configuredKey()
      const oldest = configuredKey()
      const keys = yield* build(ConfigMasterKeys.layerConfig).pipe(
        withConfig({
          SECRETS_MASTER_KEY: current.base64,
          SECRETS_MASTER_KEY_PREVIOUS: ` ${older.base64} ,${oldest.base64},`
        })
      )
      assert.strictEqual(Option.getOrThrow(yield* keys.current).id, current.id)
      assert.isTrue(Option.isSome(yield* keys.byId(older.id)))
      assert.isTrue(Option.isSome(yield* keys.byId(oldest.id)))
    }))
})
