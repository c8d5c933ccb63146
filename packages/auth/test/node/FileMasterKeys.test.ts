import type { MasterKey } from "@cairn/auth"
import { FileMasterKeys } from "@cairn/auth/node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import * as fs from "node:fs/promises"
import { join } from "node:path"
import { configuredKey, roundTrip, unwrap, withLogs, wrap } from "../MasterKeyFixtures.ts"
import * as TempDir from "../TempDir.ts"

interface KeyRingFile {
  readonly version: number
  readonly current: string
  readonly keys: Record<string, string>
}

const readRing = (path: string) => Effect.map(TempDir.readText(path), (text) => JSON.parse(text) as KeyRingFile)

const ringText = (ring: KeyRingFile) => JSON.stringify(ring)

const currentOf = (keys: { readonly current: Effect.Effect<Option.Option<MasterKey>> }) =>
  Effect.map(keys.current, Option.getOrThrow)

/** A key file holding one configured key, as an operator would provision it. */
const provisioned = Effect.gen(function*() {
  const dir = yield* TempDir.make
  const path = join(dir, "secrets.key")
  const key = configuredKey()
  yield* TempDir.writeText(path, ringText({ version: 1, current: key.id, keys: { [key.id]: key.base64 } }))
  return { dir, path, key }
})

describe("FileMasterKeys", () => {
  describe("at start", () => {
    it.effect("with create, a missing file is generated with one key, mode 0600, and logged without the key", () =>
      Effect.gen(function*() {
        const dir = yield* TempDir.make
        const path = join(dir, "data", "secrets.key")
        const { lines, result: keys } = yield* withLogs(FileMasterKeys.make({ path, create: true }))
        assert.strictEqual(yield* TempDir.modeOf(path), 0o600)
        const ring = yield* readRing(path)
        const current = yield* currentOf(keys)
        assert.deepStrictEqual(ring.version, 1)
        assert.deepStrictEqual(Object.keys(ring.keys), [current.id])
        assert.strictEqual(ring.current, current.id)
        assert.strictEqual(Buffer.from(ring.keys[current.id]!, "base64").length, 32)
        const infos = lines.filter((line) => line.level === "Info")
        assert.strictEqual(infos.length, 1)
        assert.include(infos[0]!.message, path)
        assert.include(infos[0]!.message, current.id)
        for (const line of lines) assert.notInclude(line.message, ring.keys[current.id]!)
        assert.include(keys.source, path)
      }))

    it.effect("the next start reuses the file: the same key under the same id, and nothing is logged", () =>
      Effect.gen(function*() {
        const dir = yield* TempDir.make
        const path = join(dir, "secrets.key")
        const first = yield* FileMasterKeys.make({ path, create: true })
        const before = yield* TempDir.readText(path)
        const { lines, result: again } = yield* withLogs(FileMasterKeys.make({ path, create: true }))
        const key = yield* currentOf(first)
        assert.strictEqual((yield* currentOf(again)).id, key.id)
        assert.deepStrictEqual(lines, [])
        assert.strictEqual(yield* TempDir.readText(path), before)
        const { dataKey, unwrapped } = yield* roundTrip(key, yield* currentOf(again))
        assert.deepStrictEqual(unwrapped, dataKey)
      }))

    it.effect("an operator's key file is used as it is, its key found under its fingerprint id", () =>
      Effect.gen(function*() {
        const { key, path } = yield* provisioned
        const keys = yield* FileMasterKeys.make({ path, create: false })
        assert.strictEqual((yield* currentOf(keys)).id, key.id)
        assert.strictEqual(Option.getOrThrow(yield* keys.byId(key.id)).id, key.id)
      }))

    it.effect("without create, a missing file fails naming it, and none is created", () =>
      Effect.gen(function*() {
        const dir = yield* TempDir.make
        const path = join(dir, "secrets.key")
        const error = yield* Effect.flip(FileMasterKeys.make({ path, create: false }))
        assert.strictEqual(error._tag, "SecretFileError")
        assert.include(error.message, path)
        assert.include(error.message, "does not exist")
        assert.isFalse(yield* TempDir.exists(path))
      }))

    it.effect("a file readable by its group or by others is refused, naming the file and the fix, not the key", () =>
      Effect.gen(function*() {
        const { key, path } = yield* provisioned
        for (const mode of [0o640, 0o604, 0o644]) {
          yield* Effect.promise(() => fs.chmod(path, mode))
          for (const create of [false, true]) {
            const error = yield* Effect.flip(FileMasterKeys.make({ path, create }))
            assert.strictEqual(error._tag, "SecretFileError")
            assert.include(error.message, path)
            assert.include(error.message, "chmod 600")
            assert.notInclude(JSON.stringify(error), key.base64)
          }
        }
        yield* Effect.promise(() => fs.chmod(path, 0o600))
        assert.strictEqual((yield* currentOf(yield* FileMasterKeys.make({ path, create: false }))).id, key.id)
      }))

    it.effect("a corrupt file or an unusable key fails naming the file, never its content", () =>
      Effect.gen(function*() {
        const dir = yield* TempDir.make
        const path = join(dir, "secrets.key")
        const key = configuredKey()
        const other = configuredKey()
        const secret = "dG9wLXNlY3JldC1tYXRlcmlhbA=="
        const cases: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
          [`{"version":1,"current":"${key.id}","keys":{"${key.id}":"${key.base64}"`, [key.base64]],
          [`top-secret-material ${key.base64}`, ["top-secret-material", key.base64]],
          [ringText({ version: 1, current: "mk-1", keys: { "mk-1": secret } }), [secret]],
          [ringText({ version: 1, current: key.id, keys: { [key.id]: Buffer.alloc(31, 9).toString("base64") } }), [
            Buffer.alloc(31, 9).toString("base64")
          ]],
          [ringText({ version: 1, current: key.id, keys: { [key.id]: Buffer.alloc(33, 9).toString("base64") } }), [
            Buffer.alloc(33, 9).toString("base64")
          ]],
          [ringText({ version: 1, current: key.id, keys: { [key.id]: other.base64 } }), [other.base64]],
          [ringText({ version: 1, current: other.id, keys: { [key.id]: key.base64 } }), [key.base64]],
          [ringText({ version: 2, current: key.id, keys: { [key.id]: key.base64 } }), [key.base64]],
          [ringText({ version: 1, current: key.id, keys: {} }), []],
          [JSON.stringify({ version: 1, current: key.id, keys: { [key.id]: 42, [key.base64]: "x" } }), [key.base64]]
        ]
        for (const [content, secrets] of cases) {
          yield* TempDir.writeText(path, content)
          const error = yield* Effect.flip(FileMasterKeys.make({ path, create: true }))
          assert.strictEqual(error._tag, "InvalidMasterKey", content)
          assert.include(error.message, path)
          for (const shown of [error.message, String(error), JSON.stringify(error)]) {
            for (const hidden of secrets) assert.notInclude(shown, hidden)
          }
          assert.strictEqual(yield* TempDir.readText(path), content, "a corrupt file is never overwritten")
        }
      }))
  })

  describe("rotation", () => {
    it.effect("rotate makes a new key current, and the old one stays readable by id, here and after a restart", () =>
      Effect.gen(function*() {
        const { key: old, path } = yield* provisioned
        const keys = yield* FileMasterKeys.make({ path, create: false })
        const wrappedBefore = yield* wrap(yield* currentOf(keys))
        const fresh = yield* keys.rotate
        assert.notStrictEqual(fresh.id, old.id)
        assert.strictEqual((yield* currentOf(keys)).id, fresh.id)
        const oldKey = Option.getOrThrow(yield* keys.byId(old.id))
        assert.deepStrictEqual(yield* unwrap(oldKey, wrappedBefore), wrappedBefore.dataKey)
        const ring = yield* readRing(path)
        assert.strictEqual(ring.current, fresh.id)
        assert.sameMembers(Object.keys(ring.keys), [old.id, fresh.id])
        assert.strictEqual(ring.keys[old.id], old.base64)
        assert.strictEqual(yield* TempDir.modeOf(path), 0o600)

        const restarted = yield* FileMasterKeys.make({ path, create: false })
        assert.strictEqual((yield* currentOf(restarted)).id, fresh.id)
        const oldAfterRestart = Option.getOrThrow(yield* restarted.byId(old.id))
        assert.deepStrictEqual(yield* unwrap(oldAfterRestart, wrappedBefore), wrappedBefore.dataKey)
        assert.isTrue(yield* Effect.isFailure(unwrap(fresh, wrappedBefore)), "the new key cannot unwrap old wrappings")
        const { dataKey, unwrapped } = yield* roundTrip(fresh, yield* currentOf(restarted))
        assert.deepStrictEqual(unwrapped, dataKey)
      }))

    it.effect("retire leaves only the current key, in memory and in the file, and no temporary files", () =>
      Effect.gen(function*() {
        const { dir, key: old, path } = yield* provisioned
        const keys = yield* FileMasterKeys.make({ path, create: false })
        const middle = yield* keys.rotate
        const fresh = yield* keys.rotate
        yield* keys.retire
        assert.strictEqual((yield* currentOf(keys)).id, fresh.id)
        assert.isTrue(Option.isNone(yield* keys.byId(old.id)))
        assert.isTrue(Option.isNone(yield* keys.byId(middle.id)))
        assert.isTrue(Option.isSome(yield* keys.byId(fresh.id)))
        const ring = yield* readRing(path)
        assert.deepStrictEqual(Object.keys(ring.keys), [fresh.id])
        assert.strictEqual(ring.current, fresh.id)
        assert.strictEqual(yield* TempDir.modeOf(path), 0o600)
        assert.deepStrictEqual(yield* TempDir.list(dir), ["secrets.key"])
        const restarted = yield* FileMasterKeys.make({ path, create: false })
        assert.isTrue(Option.isNone(yield* restarted.byId(old.id)))
        const { dataKey, unwrapped } = yield* roundTrip(fresh, yield* currentOf(restarted))
        assert.deepStrictEqual(unwrapped, dataKey)
      }))

    it.effect("concurrent rotations each add a key and lose none", () =>
      Effect.gen(function*() {
        const { key: old, path } = yield* provisioned
        const keys = yield* FileMasterKeys.make({ path, create: false })
        const rotated = yield* Effect.all(Array.from({ length: 6 }, () => keys.rotate), { concurrency: "unbounded" })
        const ids = [old.id, ...rotated.map((key) => key.id)]
        assert.strictEqual(new Set(ids).size, 7)
        const ring = yield* readRing(path)
        assert.sameMembers(Object.keys(ring.keys), ids)
        assert.strictEqual(ring.current, (yield* currentOf(keys)).id)
        for (const id of ids) assert.isTrue(Option.isSome(yield* keys.byId(id)))
      }))

    it.effect("a rotation that cannot write the file fails as unavailable and changes nothing", () =>
      Effect.gen(function*() {
        const dir = yield* TempDir.make
        const path = join(dir, "keys", "secrets.key")
        const keys = yield* FileMasterKeys.make({ path, create: true })
        const before = yield* currentOf(keys)
        yield* keys.rotate
        const current = yield* currentOf(keys)
        // A regular file where the key file's directory was: every write fails.
        yield* Effect.promise(() => fs.rm(join(dir, "keys"), { recursive: true }))
        yield* TempDir.writeText(join(dir, "keys"), "not a directory")
        const rotateError = yield* Effect.flip(keys.rotate)
        assert.strictEqual(rotateError._tag, "MasterKeysUnavailable")
        assert.isTrue(rotateError._tag === "MasterKeysUnavailable" && rotateError.unavailable)
        assert.strictEqual(rotateError.message, "Could not rotate the master keys")
        const retireError = yield* Effect.flip(keys.retire)
        assert.strictEqual(retireError.operation, "retire")
        assert.strictEqual((yield* currentOf(keys)).id, current.id)
        assert.isTrue(Option.isSome(yield* keys.byId(before.id)), "a failed retire forgets nothing")
      }))
  })
})
