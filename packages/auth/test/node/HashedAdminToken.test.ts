import { AdminToken } from "@cairn/auth"
import { HashedAdminToken } from "@cairn/auth/node"
import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Context, Effect, Layer, Redacted } from "effect"
import { join } from "node:path"
import * as TempDir from "../TempDir.ts"

const withConfig = (env: Record<string, string>) => Effect.provide(ConfigProvider.layer(ConfigProvider.fromUnknown(env)))

const build = (dataDir: string, env: Record<string, string> = {}) =>
  Layer.build(HashedAdminToken.layerConfig({ dataDir })).pipe(Effect.map(Context.get(AdminToken.AdminToken)), withConfig(env))

describe("AdminToken", () => {
  it.effect("ADMIN_TOKEN wins over the data directory, which is left untouched", () =>
    Effect.gen(function*() {
      const dir = yield* TempDir.make
      const admin = yield* build(dir, { ADMIN_TOKEN: "from-the-environment" })
      assert.isTrue(yield* admin.verify("from-the-environment"))
      assert.isFalse(yield* admin.verify("from-the-environmenT"))
      assert.deepStrictEqual(admin.source, { _tag: "Config" })
      assert.isFalse(yield* TempDir.exists(HashedAdminToken.tokenFilePath(dir)))
    }))

  it.effect("without ADMIN_TOKEN a 32-byte token is generated once in <dataDir>/admin-token with mode 0600", () =>
    Effect.gen(function*() {
      const dir = yield* TempDir.make
      const path = HashedAdminToken.tokenFilePath(dir)
      const first = yield* build(dir)
      assert.deepStrictEqual(first.source, { _tag: "File", path, created: true })
      assert.strictEqual(yield* TempDir.modeOf(path), 0o600)
      const token = yield* TempDir.readText(path)
      assert.match(token, /^[A-Za-z0-9_-]{43}$/)
      assert.strictEqual(Buffer.from(token, "base64url").length, 32)
      assert.isTrue(yield* first.verify(token))

      const restarted = yield* build(dir)
      assert.deepStrictEqual(restarted.source, { _tag: "File", path, created: false })
      assert.strictEqual(yield* TempDir.readText(path), token)
      assert.isTrue(yield* restarted.verify(token))
    }))

  it.effect("a fresh data directory in a missing parent is created", () =>
    Effect.gen(function*() {
      const dir = join(yield* TempDir.make, "not", "yet")
      const admin = yield* build(dir)
      assert.isTrue(yield* admin.verify(yield* TempDir.readText(HashedAdminToken.tokenFilePath(dir))))
    }))

  it.effect("two data directories get different tokens", () =>
    Effect.gen(function*() {
      const one = yield* TempDir.make
      const other = yield* TempDir.make
      yield* build(one)
      const admin = yield* build(other)
      assert.isFalse(yield* admin.verify(yield* TempDir.readText(HashedAdminToken.tokenFilePath(one))))
    }))

  it.effect("wrong candidates are refused, whatever their length", () =>
    Effect.gen(function*() {
      const token = "correct-horse-battery-staple"
      const admin = yield* Layer.build(HashedAdminToken.layer(Redacted.make(token))).pipe(
        Effect.map(Context.get(AdminToken.AdminToken))
      )
      assert.isTrue(yield* admin.verify(token))
      const wrong = ["", "c", token.slice(0, -1), `${token}x`, `${token} `, token.toUpperCase(), token.replace("e", "f")]
      for (const candidate of wrong) {
        assert.isFalse(yield* admin.verify(candidate), JSON.stringify(candidate))
      }
    }))

  it.effect("concurrent first starts agree on one token, and exactly one reports creating it", () =>
    Effect.gen(function*() {
      const dir = yield* TempDir.make
      const admins = yield* Effect.all(Array.from({ length: 8 }, () => build(dir)), { concurrency: "unbounded" })
      const token = yield* TempDir.readText(HashedAdminToken.tokenFilePath(dir))
      for (const admin of admins) assert.isTrue(yield* admin.verify(token))
      assert.strictEqual(admins.filter((admin) => admin.source._tag === "File" && admin.source.created).length, 1)
      assert.deepStrictEqual(yield* TempDir.list(dir), ["admin-token"])
    }))

  it.effect("an operator's edit to the file is honoured, trailing newline and all", () =>
    Effect.gen(function*() {
      const dir = yield* TempDir.make
      yield* TempDir.writeText(HashedAdminToken.tokenFilePath(dir), "chosen-by-operator\n")
      const admin = yield* build(dir)
      assert.isTrue(yield* admin.verify("chosen-by-operator"))
      assert.isFalse(yield* admin.verify("chosen-by-operator\n"))
    }))

  it.effect("an empty ADMIN_TOKEN counts as unset, so the file is used", () =>
    Effect.gen(function*() {
      const dir = yield* TempDir.make
      const admin = yield* build(dir, { ADMIN_TOKEN: "" })
      assert.strictEqual(admin.source._tag, "File")
      assert.isFalse(yield* admin.verify(""))
    }))

  it.effect("a blank token is refused at startup rather than accepting a blank candidate", () =>
    Effect.gen(function*() {
      const dir = yield* TempDir.make
      const fromEnvironment = yield* Effect.flip(build(dir, { ADMIN_TOKEN: "  " }))
      assert.strictEqual(fromEnvironment._tag, "InvalidAdminToken")
      assert.include(fromEnvironment.message, "ADMIN_TOKEN")
      yield* TempDir.writeText(HashedAdminToken.tokenFilePath(dir), "\n")
      const fromFile = yield* Effect.flip(build(dir))
      assert.strictEqual(fromFile._tag, "InvalidAdminToken")
      assert.include(fromFile.message, HashedAdminToken.tokenFilePath(dir))
    }))

  describe("read, for local tooling", () => {
    it.effect("returns ADMIN_TOKEN when set", () =>
      Effect.gen(function*() {
        const dir = yield* TempDir.make
        const token = yield* HashedAdminToken.read({ dataDir: dir }).pipe(withConfig({ ADMIN_TOKEN: "from-the-environment" }))
        assert.strictEqual(Redacted.value(token), "from-the-environment")
      }))

    it.effect("otherwise returns the token the server generated", () =>
      Effect.gen(function*() {
        const dir = yield* TempDir.make
        const admin = yield* build(dir)
        const token = yield* HashedAdminToken.read({ dataDir: dir }).pipe(withConfig({}))
        assert.isTrue(yield* admin.verify(Redacted.value(token)))
      }))

    it.effect("fails, without creating one, when the server never started on the data directory", () =>
      Effect.gen(function*() {
        const dir = yield* TempDir.make
        const error = yield* Effect.flip(HashedAdminToken.read({ dataDir: dir }).pipe(withConfig({})))
        assert.strictEqual(error._tag, "SecretFileError")
        assert.isFalse(yield* TempDir.exists(HashedAdminToken.tokenFilePath(dir)))
      }))
  })
})
