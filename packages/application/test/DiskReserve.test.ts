/**
 * The disk reserve as use cases ask it (`ensureRoom`), over a FreeSpace the test sets: the domain's rule applied to
 * the measured free bytes, nothing asked of the disk when the reserve is off, and nothing refused when the free space
 * cannot be measured.
 */
import { DiskReserve, DiskReserveBytes, FreeSpace } from "@cairn/application"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"

const MiB = 1024 ** 2

/** `ensureRoom(bytes)` on a disk with `free` bytes free and a reserve of `reserve`: "allowed", or the refusal's tag; and how often the disk was asked. */
const ask = (free: number | undefined, reserve: number, bytes: number) => {
  let measured = 0
  const layer = DiskReserve.layer.pipe(
    Layer.provide(FreeSpace.layerTest(() => {
      measured++
      return free
    })),
    Layer.provide(Layer.succeed(DiskReserveBytes, reserve))
  )
  return DiskReserve.use((reserved) => reserved.ensureRoom(bytes)).pipe(
    Effect.as("allowed"),
    Effect.catchTag("InsufficientStorage", (refusal) => Effect.succeed(refusal._tag)),
    Effect.map((verdict) => ({ verdict, measured })),
    Effect.provide(layer)
  )
}

describe("DiskReserve.ensureRoom", () => {
  it.effect("refuses a write whose size would eat into the reserve, and allows one that leaves it whole", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* ask(100 * MiB, 64 * MiB, 40 * MiB), { verdict: "InsufficientStorage", measured: 1 })
      assert.deepStrictEqual(yield* ask(100 * MiB, 64 * MiB, 10 * MiB), { verdict: "allowed", measured: 1 })
    }))

  it.effect("refuses a write of unknown size (0) once the disk is down to the reserve", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* ask(64 * MiB, 64 * MiB, 0), { verdict: "InsufficientStorage", measured: 1 })
    }))

  it.effect("with a reserve of 0 allows everything without measuring the disk", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* ask(0, 0, 100 * MiB), { verdict: "allowed", measured: 0 })
    }))

  it.effect("allows the write when the free space cannot be measured", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* ask(undefined, 64 * MiB, 100 * MiB), { verdict: "allowed", measured: 1 })
    }))

  it.effect("keeps 1 GiB by default", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* DiskReserveBytes, 1024 ** 3)
    }))
})
