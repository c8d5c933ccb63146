/**
 * Which MasterKeys adapter a server uses, from its configuration, in this order: `SECRETS_MASTER_KEY` (with
 * `SECRETS_MASTER_KEY_PREVIOUS`) → ConfigMasterKeys; `SECRETS_MASTER_KEY_FILE` → FileMasterKeys on that file, which
 * must exist; an embedded server (PGlite, a single node) → FileMasterKeys on `<dataDir>/secrets.key`, generated at
 * first start; otherwise → NoMasterKeys. Nodes sharing a database must share their master keys, and a key generated
 * by one node would be unknown to the others, so only an embedded server ever generates one.
 */
import { Config, Effect, Layer, Option } from "effect"
import { join } from "node:path"
import * as ConfigMasterKeys from "./ConfigMasterKeys.ts"
import * as FileMasterKeys from "./FileMasterKeys.ts"
import { InvalidMasterKey } from "../MasterKeys.ts"
import * as NoMasterKeys from "./NoMasterKeys.ts"

export interface Options {
  readonly dataDir: string
  /** The server runs on embedded PGlite: it is the only node, so it may keep its own key file. */
  readonly embedded: boolean
}

/** Where an embedded server keeps its key ring when no master key is configured. */
export const keyFilePath = (dataDir: string) => join(dataDir, "secrets.key")

export const layerConfig = (options: Options) =>
  Layer.unwrap(
    Effect.gen(function*() {
      const current = yield* Config.option(Config.Redacted("SECRETS_MASTER_KEY"))
      const previous = yield* ConfigMasterKeys.previousFromConfig
      const file = yield* Config.option(Config.String("SECRETS_MASTER_KEY_FILE"))
      if (Option.isSome(current)) {
        if (Option.isSome(file)) {
          yield* Effect.logWarning(
            "SECRETS_MASTER_KEY is set, so SECRETS_MASTER_KEY_FILE is ignored; unset one of them"
          )
        }
        return ConfigMasterKeys.layer({ current: current.value, previous })
      }
      // Previous keys alone would be silently ignored, leaving every secret wrapped under them unreadable.
      if (previous.length > 0) {
        return yield* new InvalidMasterKey({
          source: "SECRETS_MASTER_KEY_PREVIOUS",
          problem: "it is set but SECRETS_MASTER_KEY is not; set SECRETS_MASTER_KEY to the current master key"
        })
      }
      if (Option.isSome(file)) return FileMasterKeys.layer({ path: file.value, create: false })
      if (options.embedded) return FileMasterKeys.layer({ path: keyFilePath(options.dataDir), create: true })
      yield* Effect.logWarning(
        "Secrets are not configured: no master key is set, so POST /v0/secrets answers 503. Nodes sharing a " +
          "database need the same key: set SECRETS_MASTER_KEY (openssl rand -base64 32) or SECRETS_MASTER_KEY_FILE " +
          "on every node and restart"
      )
      return NoMasterKeys.layer
    })
  )
