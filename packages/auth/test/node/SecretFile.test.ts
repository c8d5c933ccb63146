import { SecretFile } from "@cairn/auth/node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Logger, Redacted, Ref } from "effect"
import { join } from "node:path"
import * as TempDir from "../TempDir.ts"

describe("SecretFile", () => {
  it.effect("creates a missing file with its parent directories and mode 0600", () =>
    Effect.gen(function*() {
      const dir = yield* TempDir.make
      const path = join(dir, "nested", "deeper", "secret")
      const loaded = yield* SecretFile.readOrCreate(path, Effect.succeed(Redacted.make("s3cret")))
      assert.isTrue(loaded.created)
      assert.strictEqual(Redacted.value(loaded.content), "s3cret")
      assert.strictEqual(yield* TempDir.readText(path), "s3cret")
      assert.strictEqual(yield* TempDir.modeOf(path), 0o600)
    }))

  it.effect("reuses an existing file without generating a new secret", () =>
    Effect.gen(function*() {
      const dir = yield* TempDir.make
      const path = join(dir, "secret")
      const generated = yield* Ref.make(0)
      const generate = Ref.updateAndGet(generated, (n) => n + 1).pipe(Effect.map((n) => Redacted.make(`secret-${n}`)))
      yield* SecretFile.readOrCreate(path, generate)
      const again = yield* SecretFile.readOrCreate(path, generate)
      assert.isFalse(again.created)
      assert.strictEqual(Redacted.value(again.content), "secret-1")
      assert.strictEqual(yield* Ref.get(generated), 1)
    }))

  it.effect("concurrent first starts all return the one secret that won, and leave no temporary files", () =>
    Effect.gen(function*() {
      const dir = yield* TempDir.make
      const path = join(dir, "data", "secret")
      const results = yield* Effect.all(
        Array.from({ length: 16 }, (_, i) => SecretFile.readOrCreate(path, Effect.succeed(Redacted.make(`candidate-${i}`)))),
        { concurrency: "unbounded" }
      )
      const onDisk = yield* TempDir.readText(path)
      assert.isTrue(onDisk.startsWith("candidate-"))
      assert.deepStrictEqual(results.map((r) => Redacted.value(r.content)), results.map(() => onDisk))
      assert.strictEqual(results.filter((r) => r.created).length, 1)
      assert.deepStrictEqual(yield* TempDir.list(join(dir, "data")), ["secret"])
    }))

  it.effect("an existing file readable by other users is still used, with a warning naming it", () =>
    Effect.gen(function*() {
      const dir = yield* TempDir.make
      const path = join(dir, "secret")
      yield* TempDir.writeText(path, "shared-secret", 0o644)
      const warnings: Array<string> = []
      const capture = Logger.make(({ logLevel, message }) => {
        if (logLevel === "Warn") warnings.push(String(message))
      })
      const loaded = yield* SecretFile.readOrCreate(path, Effect.succeed(Redacted.make("unused"))).pipe(
        Effect.provide(Logger.layer([capture]))
      )
      assert.strictEqual(Redacted.value(loaded.content), "shared-secret")
      assert.strictEqual(warnings.length, 1)
      assert.include(warnings[0], path)
      assert.notInclude(warnings[0], "shared-secret")
    }))

  it.effect("read fails on a missing file, naming the path", () =>
    Effect.gen(function*() {
      const dir = yield* TempDir.make
      const path = join(dir, "absent")
      const error = yield* Effect.flip(SecretFile.read(path))
      assert.strictEqual(error._tag, "SecretFileError")
      assert.strictEqual(error.path, path)
      assert.include(error.message, path)
      assert.isFalse(yield* TempDir.exists(path))
    }))

  it.effect("a file system failure is a SecretFileError, not a defect", () =>
    Effect.gen(function*() {
      const dir = yield* TempDir.make
      // A regular file where a parent directory must go.
      yield* TempDir.writeText(join(dir, "blocker"), "x")
      const error = yield* Effect.flip(SecretFile.readOrCreate(join(dir, "blocker", "secret"), Effect.succeed(Redacted.make("s"))))
      assert.strictEqual(error._tag, "SecretFileError")
      assert.match(error.reason, /ENOTDIR|EEXIST/)
    }))
})

describe("SecretFile, for keys that must stay private", () => {
  it.effect("a file readable by other users is refused when asked, naming the file, not its content", () =>
    Effect.gen(function*() {
      const dir = yield* TempDir.make
      const path = join(dir, "secret")
      yield* TempDir.writeText(path, "shared-secret", 0o640)
      const read = yield* Effect.flip(SecretFile.read(path, { ifShared: "refuse" }))
      const created = yield* Effect.flip(
        SecretFile.readOrCreate(path, Effect.succeed(Redacted.make("unused")), { ifShared: "refuse" })
      )
      for (const error of [read, created]) {
        assert.strictEqual(error._tag, "SecretFileError")
        assert.include(error.message, path)
        assert.include(error.message, "chmod 600")
        assert.notInclude(error.message, "shared-secret")
      }
      assert.strictEqual(yield* TempDir.readText(path), "shared-secret")
    }))

  it.effect("replace swaps the content atomically with mode 0600 and leaves no temporary files", () =>
    Effect.gen(function*() {
      const dir = yield* TempDir.make
      const path = join(dir, "ring", "secret")
      yield* SecretFile.replace(path, Redacted.make("first"))
      assert.strictEqual(yield* TempDir.readText(path), "first")
      yield* TempDir.writeText(path, "first", 0o644)
      yield* SecretFile.replace(path, Redacted.make("second"))
      assert.strictEqual(yield* TempDir.readText(path), "second")
      assert.strictEqual(yield* TempDir.modeOf(path), 0o600)
      assert.deepStrictEqual(yield* TempDir.list(join(dir, "ring")), ["secret"])
    }))

  it.effect("replace fails with a SecretFileError naming the file when it cannot write", () =>
    Effect.gen(function*() {
      const dir = yield* TempDir.make
      yield* TempDir.writeText(join(dir, "blocker"), "x")
      const error = yield* Effect.flip(SecretFile.replace(join(dir, "blocker", "secret"), Redacted.make("s")))
      assert.strictEqual(error._tag, "SecretFileError")
      assert.include(error.message, join(dir, "blocker", "secret"))
    }))
})
