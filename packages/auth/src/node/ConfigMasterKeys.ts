/**
 * The MasterKeys port on keys given in configuration: `SECRETS_MASTER_KEY` (base64 of 32 bytes) is current, and
 * `SECRETS_MASTER_KEY_PREVIOUS` (comma-separated) holds keys from before a rotation that must stay readable. Cairn
 * cannot change configuration, so `rotate` is the operator's job (it fails with RotationUnsupported, saying how) and
 * `retire` does nothing: the operator drops the previous keys once the data keys are rewrapped.
 */
import { Config, Effect, Layer, Option, Redacted } from "effect"
import * as MasterKeyMaterial from "./MasterKeyMaterial.ts"
import { MasterKeys, RotationUnsupported } from "../MasterKeys.ts"

export interface Options {
  readonly current: Redacted.Redacted<string>
  readonly previous: ReadonlyArray<Redacted.Redacted<string>>
}

// Errors name the variable, and which entry of the list, never the value.
const previousSource = (index: number, count: number) =>
  count === 1 ? "SECRETS_MASTER_KEY_PREVIOUS" : `SECRETS_MASTER_KEY_PREVIOUS (key ${index + 1} of ${count})`

export const make = Effect.fnUntraced(function*(options: Options) {
  const current = yield* MasterKeyMaterial.decode(options.current, "SECRETS_MASTER_KEY")
  const previous = yield* Effect.forEach(
    options.previous,
    (encoded, index) => MasterKeyMaterial.decode(encoded, previousSource(index, options.previous.length))
  )
  // A previous key equal to the current one (an unfinished edit of the configuration) is the same id: kept once.
  const keys = new Map([current, ...previous].map(({ key }) => [key.id, key]))
  return MasterKeys.of({
    source: keys.size === 1
      ? "SECRETS_MASTER_KEY"
      : `SECRETS_MASTER_KEY and ${keys.size - 1} previous key(s) in SECRETS_MASTER_KEY_PREVIOUS`,
    current: Effect.succeedSome(current.key),
    byId: (id) => Effect.succeed(Option.fromUndefinedOr(keys.get(id))),
    rotate: Effect.fail(new RotationUnsupported({ reason: "keys-are-configured" })),
    retire: Effect.void
  })
})

export const layer = (options: Options) => Layer.effect(MasterKeys, make(options))

/** `SECRETS_MASTER_KEY_PREVIOUS` as a list; spaces around the commas and empty entries are ignored. */
export const previousFromConfig: Config.Config<ReadonlyArray<Redacted.Redacted<string>>> = Config.option(
  Config.Redacted("SECRETS_MASTER_KEY_PREVIOUS")
).pipe(
  Config.map(Option.match({
    onNone: () => [],
    onSome: (list) =>
      Redacted.value(list).split(",").flatMap((entry) => entry.trim() === "" ? [] : [Redacted.make(entry.trim())])
  }))
)

/** `SECRETS_MASTER_KEY`, required, and `SECRETS_MASTER_KEY_PREVIOUS`, optional. */
export const layerConfig = Layer.unwrap(
  Effect.gen(function*() {
    const current = yield* Config.Redacted("SECRETS_MASTER_KEY")
    return layer({ current, previous: yield* previousFromConfig })
  })
)
