import { MasterKeysConfig } from "@cairn/auth/node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { join } from "node:path"
import { build, configuredKey, roundTrip, withConfig, withLogs } from "../MasterKeyFixtures.ts"
import * as TempDir from "../TempDir.ts"

const choose = (options: MasterKeysConfig.Options, env: Record<string, string>) =>
  withLogs(build(MasterKeysConfig.layerConfig(options)).pipe(withConfig(env)))

const ringWith = (key: ReturnType<typeof configuredKey>) =>
  JSON.stringify({ version: 1, current: key.id, keys: { [key.id]: key.base64 } })

describe("MasterKeysConfig.layerConfig", () => {
  it.effect("SECRETS_MASTER_KEY comes first, with SECRETS_MASTER_KEY_PREVIOUS, and no key file is written", () =>
    Effect.gen(function*() {
      const dir = yield* TempDir.make
      const current = configuredKey()
      const older = configuredKey()
      const { result: keys } = yield* choose({ dataDir: dir, embedded: true }, {
        SECRETS_MASTER_KEY: current.base64,
        SECRETS_MASTER_KEY_PREVIOUS: older.base64
      })
      assert.strictEqual(Option.getOrThrow(yield* keys.current).id, current.id)
      assert.isTrue(Option.isSome(yield* keys.byId(older.id)))
      assert.strictEqual((yield* Effect.flip(keys.rotate))._tag, "RotationUnsupported")
      assert.deepStrictEqual(yield* TempDir.list(dir), [])
    }))

  it.effect("SECRETS_MASTER_KEY wins over SECRETS_MASTER_KEY_FILE, with a warning that the file is ignored", () =>
    Effect.gen(function*() {
      const dir = yield* TempDir.make
      const configured = configuredKey()
      const { lines, result: keys } = yield* choose({ dataDir: dir, embedded: false }, {
        SECRETS_MASTER_KEY: configured.base64,
        SECRETS_MASTER_KEY_FILE: join(dir, "absent.key")
      })
      assert.strictEqual(Option.getOrThrow(yield* keys.current).id, configured.id)
      const warnings = lines.filter((line) => line.level === "Warn")
      assert.strictEqual(warnings.length, 1)
      assert.include(warnings[0]!.message, "SECRETS_MASTER_KEY_FILE is ignored")
      for (const line of lines) assert.notInclude(line.message, configured.base64)
    }))

  it.effect("SECRETS_MASTER_KEY_FILE is used next, and rotates in place", () =>
    Effect.gen(function*() {
      const dir = yield* TempDir.make
      const path = join(dir, "operator.key")
      const key = configuredKey()
      yield* TempDir.writeText(path, ringWith(key))
      const { result: keys } = yield* choose({ dataDir: dir, embedded: true }, { SECRETS_MASTER_KEY_FILE: path })
      assert.strictEqual(Option.getOrThrow(yield* keys.current).id, key.id)
      assert.include(keys.source, path)
      const fresh = yield* keys.rotate
      assert.include(yield* TempDir.readText(path), fresh.id)
      assert.isFalse(yield* TempDir.exists(MasterKeysConfig.keyFilePath(dir)))
    }))

  it.effect("a missing SECRETS_MASTER_KEY_FILE is an error, never generated, even on an embedded server", () =>
    Effect.gen(function*() {
      const dir = yield* TempDir.make
      const path = join(dir, "operator.key")
      const error = yield* Effect.flip(choose({ dataDir: dir, embedded: true }, { SECRETS_MASTER_KEY_FILE: path }))
      assert.strictEqual(error._tag, "SecretFileError")
      assert.include(error.message, path)
      assert.deepStrictEqual(yield* TempDir.list(dir), [])
    }))

  it.effect("an embedded server without configuration generates <dataDir>/secrets.key once, and logs where", () =>
    Effect.gen(function*() {
      const dir = yield* TempDir.make
      const path = MasterKeysConfig.keyFilePath(dir)
      assert.strictEqual(path, join(dir, "secrets.key"))
      const first = yield* choose({ dataDir: dir, embedded: true }, {})
      const key = Option.getOrThrow(yield* first.result.current)
      assert.strictEqual(yield* TempDir.modeOf(path), 0o600)
      assert.strictEqual(first.lines.filter((line) => line.level === "Info" && line.message.includes(path)).length, 1)
      const again = yield* choose({ dataDir: dir, embedded: true }, { SECRETS_MASTER_KEY: "" })
      const { dataKey, unwrapped } = yield* roundTrip(key, Option.getOrThrow(yield* again.result.current))
      assert.deepStrictEqual(unwrapped, dataKey)
      assert.deepStrictEqual(again.lines, [])
    }))

  it.effect("nodes sharing a database, unconfigured, get no master key and a warning; no key is generated", () =>
    Effect.gen(function*() {
      const dir = yield* TempDir.make
      const { lines, result: keys } = yield* choose({ dataDir: dir, embedded: false }, {})
      assert.isTrue(Option.isNone(yield* keys.current))
      assert.strictEqual((yield* Effect.flip(keys.rotate))._tag, "RotationUnsupported")
      const warnings = lines.filter((line) => line.level === "Warn")
      assert.strictEqual(warnings.length, 1)
      assert.include(warnings[0]!.message, "Secrets are not configured")
      assert.include(warnings[0]!.message, "503")
      assert.include(warnings[0]!.message, "SECRETS_MASTER_KEY")
      assert.deepStrictEqual(yield* TempDir.list(dir), [])
    }))

  it.effect("SECRETS_MASTER_KEY_PREVIOUS without SECRETS_MASTER_KEY is refused rather than ignored", () =>
    Effect.gen(function*() {
      const dir = yield* TempDir.make
      const older = configuredKey()
      const error = yield* Effect.flip(
        choose({ dataDir: dir, embedded: true }, { SECRETS_MASTER_KEY_PREVIOUS: older.base64 })
      )
      assert.strictEqual(error._tag, "InvalidMasterKey")
      assert.include(error.message, "SECRETS_MASTER_KEY is not")
      assert.notInclude(error.message, older.base64)
      assert.deepStrictEqual(yield* TempDir.list(dir), [])
    }))

  it.effect("a bad SECRETS_MASTER_KEY fails the layer naming the variable, not its value", () =>
    Effect.gen(function*() {
      const dir = yield* TempDir.make
      const error = yield* Effect.flip(
        choose({ dataDir: dir, embedded: true }, { SECRETS_MASTER_KEY: "hunter2-secret" })
      )
      assert.strictEqual(error._tag, "InvalidMasterKey")
      assert.include(error.message, "SECRETS_MASTER_KEY")
      assert.notInclude(error.message, "hunter2-secret")
      assert.deepStrictEqual(yield* TempDir.list(dir), [])
    }))
})
