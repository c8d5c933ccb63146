/**
 * The FreeSpace port on Node's statfs: a real directory's free bytes (as `df` counts them for unprivileged writers),
 * measured once a second at most, and unknown (never a failure) for a directory that is not there.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as NodeFreeSpace from "../src/NodeFreeSpace.ts"

describe("NodeFreeSpace", () => {
  it.effect("answers the data directory's free bytes: bavail × bsize of its file system", () =>
    Effect.gen(function*() {
      const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "cairn-free-"))
      const free = yield* NodeFreeSpace.make(dir).freeBytes
      const stats = Fs.statfsSync(dir)
      assert.isNumber(free)
      // Other processes write meanwhile: the same file system's answer, within 1 GiB.
      assert.isAtMost(Math.abs(free! - stats.bavail * stats.bsize), 1024 ** 3)
      Fs.rmSync(dir, { recursive: true })
    }))

  it.effect("keeps a measurement for a second", () =>
    Effect.gen(function*() {
      const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "cairn-free-"))
      const space = NodeFreeSpace.make(dir)
      const first = yield* space.freeBytes
      // The directory is gone, yet the measurement stands for its second.
      Fs.rmSync(dir, { recursive: true })
      assert.strictEqual(yield* space.freeBytes, first)
    }))

  it.effect("answers unknown for a directory that is not there", () =>
    Effect.gen(function*() {
      assert.isUndefined(yield* NodeFreeSpace.make(Path.join(Os.tmpdir(), `cairn-missing-${crypto.randomUUID()}`)).freeBytes)
    }))
})
