/** `DISK_RESERVE` as the runtime reads it: 1 GiB by default, bytes or `2GiB`-style sizes, `0` or `off` for none. */
import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Exit } from "effect"
import { CairnRuntime } from "../src/index.ts"

const read = (env: Record<string, string>) =>
  CairnRuntime.diskReserveConfig.pipe(Effect.provide(ConfigProvider.layer(ConfigProvider.fromUnknown(env))))

describe("DISK_RESERVE", () => {
  it.effect("is 1 GiB unless set", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* read({}), 1024 ** 3)
    }))

  it.effect("takes bytes or a size with a unit", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* read({ DISK_RESERVE: "2GiB" }), 2 * 1024 ** 3)
      assert.strictEqual(yield* read({ DISK_RESERVE: "512 MiB" }), 512 * 1024 ** 2)
      assert.strictEqual(yield* read({ DISK_RESERVE: "1000000" }), 1_000_000)
    }))

  it.effect("is off at 0", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* read({ DISK_RESERVE: "0" }), 0)
      assert.strictEqual(yield* read({ DISK_RESERVE: "off" }), 0)
    }))

  it.effect("stops Cairn at start when it is not a size", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(read({ DISK_RESERVE: "lots" }))
      assert.isTrue(Exit.isFailure(exit))
    }))
})
