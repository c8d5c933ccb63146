/**
 * The MasterKeys port on a key-ring file, `{ "version": 1, "current": <id>, "keys": { <id>: <base64 key> } }` with
 * mode 0600. The ring is read once at start and kept in memory. `rotate` and `retire` write the whole new ring to a
 * temporary file and rename it into place before this process serves it, so no data key is ever wrapped under a key
 * that is not yet on disk. With `create` (the embedded, single-node default) a missing file is generated with one
 * fresh key. A file readable by other users is refused: whoever can read it can unwrap every workspace's secrets.
 */
import { Effect, Layer, Option, Redacted, Ref, Schema, Semaphore } from "effect"
import * as MasterKeyMaterial from "./MasterKeyMaterial.ts"
import { InvalidMasterKey, type MasterKey, MasterKeys, MasterKeysUnavailable } from "../MasterKeys.ts"
import * as SecretFile from "./SecretFile.ts"

export interface Options {
  readonly path: string
  /** Generate the file, with one fresh key, when it is missing; otherwise a missing file is an error. */
  readonly create: boolean
}

const KeyRingJson = Schema.fromJsonString(Schema.Struct({
  version: Schema.Literal(1),
  current: Schema.String,
  keys: Schema.Record(Schema.String, Schema.String)
}))

interface Ring {
  readonly current: MasterKeyMaterial.Material
  /** Every key still readable, the current one included, by id. */
  readonly keys: ReadonlyMap<string, MasterKeyMaterial.Material>
}

const ringOf = (current: MasterKeyMaterial.Material, kept: ReadonlyArray<MasterKeyMaterial.Material> = []): Ring => ({
  current,
  keys: new Map([...kept, current].map((material) => [material.key.id, material]))
})

const encode = (ring: Ring): Redacted.Redacted<string> => {
  const keys = Object.fromEntries(Array.from(ring.keys, ([id, material]) => [id, Redacted.value(material.encoded)]))
  return Redacted.make(`${JSON.stringify({ version: 1, current: ring.current.key.id, keys }, null, 2)}\n`)
}

const decode = Effect.fnUntraced(function*(
  content: Redacted.Redacted<string>,
  path: string
): Effect.fn.Return<Ring, InvalidMasterKey> {
  const invalid = (problem: string) => new InvalidMasterKey({ source: path, problem })
  // The schema's error would quote the file, which holds the keys.
  const file = yield* Schema.decodeUnknownEffect(KeyRingJson)(Redacted.value(content)).pipe(
    Effect.mapError(() => invalid(`it is not a key ring: expected JSON { "version": 1, "current", "keys" }`))
  )
  // Ids are fingerprints and safe to name, but a corrupt file may hold anything where an id belongs.
  const name = (id: string) => MasterKeyMaterial.isKeyId(id) ? `key ${id}` : "a key"
  const keys = new Map<string, MasterKeyMaterial.Material>()
  for (const [id, encoded] of Object.entries(file.keys)) {
    const material = yield* MasterKeyMaterial.decode(Redacted.make(encoded), `${path} (${name(id)})`)
    // Data keys are wrapped under the id; a key filed under another id would be looked up in vain, or worse.
    if (material.key.id !== id) return yield* invalid(`${name(id)} is not the key its id names; was the file edited?`)
    keys.set(id, material)
  }
  const current = keys.get(file.current)
  if (current === undefined) return yield* invalid("its current key is not one of its keys")
  return { current, keys }
})

export const make = Effect.fnUntraced(function*(options: Options) {
  const { path } = options
  const loaded = options.create
    ? yield* SecretFile.readOrCreate(
      path,
      Effect.map(MasterKeyMaterial.generate, (material) => encode(ringOf(material))),
      { ifShared: "refuse" }
    )
    : { content: yield* SecretFile.read(path, { ifShared: "refuse" }), created: false }
  const ring = yield* Ref.make(yield* decode(loaded.content, path))
  if (loaded.created) {
    const { current } = yield* Ref.get(ring)
    // Secrets wrapped under an earlier key (a deleted or replaced file) can no longer be read; an operator wants to
    // know, and to back the new file up.
    yield* Effect.logInfo(`Generated master key ${current.key.id} in ${path}: back it up, kept apart from the database backups (without it, secrets are lost)`)
  }

  // One change at a time, so a retire cannot drop the key a concurrent rotate just made current.
  const changes = yield* Semaphore.make(1)
  const save = (next: Ring, operation: MasterKeysUnavailable["operation"]) =>
    SecretFile.replace(path, encode(next)).pipe(
      Effect.mapError((cause) => new MasterKeysUnavailable({ operation, cause })),
      Effect.andThen(Ref.set(ring, next))
    )

  const rotate: Effect.Effect<MasterKey, MasterKeysUnavailable> = changes.withPermit(Effect.gen(function*() {
    const { keys } = yield* Ref.get(ring)
    let fresh = yield* MasterKeyMaterial.generate
    // Ids are 48-bit fingerprints: a clash is all but impossible, and would silently replace a kept key.
    while (keys.has(fresh.key.id)) fresh = yield* MasterKeyMaterial.generate
    yield* save(ringOf(fresh, [...keys.values()]), "rotate")
    return fresh.key
  }))

  const retire: Effect.Effect<void, MasterKeysUnavailable> = changes.withPermit(Effect.gen(function*() {
    const { current, keys } = yield* Ref.get(ring)
    if (keys.size > 1) yield* save(ringOf(current), "retire")
  }))

  return MasterKeys.of({
    source: `the key file ${path}`,
    current: Effect.map(Ref.get(ring), (ring) => Option.some(ring.current.key)),
    byId: (id) => Effect.map(Ref.get(ring), (ring) => Option.fromUndefinedOr(ring.keys.get(id)?.key)),
    rotate,
    retire
  })
})

export const layer = (options: Options) => Layer.effect(MasterKeys, make(options))
