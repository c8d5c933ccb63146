/**
 * The MasterKeys port: where the keys that wrap workspaces' data keys come from. Secrets are encrypted under a random
 * data key per workspace, and a data key is only ever stored wrapped (AES-256-GCM) under a master key, named by the
 * master key's id. A rotation makes a new key current while the earlier ones stay readable, so data keys can be
 * rewrapped one by one; retiring then forgets the earlier keys. Adapters, in `@cairn/auth/node`: `FileMasterKeys` (a
 * key-ring file), `ConfigMasterKeys` (keys in configuration), `NoMasterKeys`; `MasterKeysConfig.layerConfig` picks one.
 */
import { Context, type Effect, type Option, Schema } from "effect"

/**
 * A master key: its id (a fingerprint of the key, safe to store and log) and the key, usable only to wrap and unwrap.
 */
export interface MasterKey {
  readonly id: string
  /**
   * AES-GCM 256, non-extractable, usages `encrypt` and `decrypt`: WebCrypto's CryptoKey, global on Node, Bun and
   * Deno (this package's Node types declare the global as a class value, hence the instance type).
   */
  readonly key: InstanceType<typeof CryptoKey>
}

/**
 * A master key in configuration or in a key file cannot be used. The message names where the key came from and what
 * is wrong with it, never what it holds: `problem` is always one of this package's fixed texts.
 */
export class InvalidMasterKey extends Schema.TaggedError<InvalidMasterKey>()("InvalidMasterKey", {
  source: Schema.String,
  problem: Schema.String
}) {
  override get message() {
    return `Cannot use the master key in ${this.source}: ${this.problem}`
  }
}

/**
 * Cairn cannot rotate these master keys itself: they come from configuration, which only the operator can change, or
 * there are none.
 */
export class RotationUnsupported extends Schema.TaggedError<RotationUnsupported>()("RotationUnsupported", {
  reason: Schema.Literals(["keys-are-configured", "no-master-key"])
}) {
  override get message() {
    return this.reason === "keys-are-configured"
      ? "The master key comes from configuration, so Cairn cannot rotate it. Set SECRETS_MASTER_KEY to a new key " +
        "(openssl rand -base64 32) and SECRETS_MASTER_KEY_PREVIOUS to the old one, restart, then rotate again: " +
        "that rewraps the data keys under the new key"
      : "No master key is configured, so there is nothing to rotate. Set SECRETS_MASTER_KEY (or " +
        "SECRETS_MASTER_KEY_FILE) and restart"
  }
}

/** The master keys could not be changed (the key file could not be written); what this process serves is unchanged. */
export class MasterKeysUnavailable extends Schema.TaggedError<MasterKeysUnavailable>()("MasterKeysUnavailable", {
  operation: Schema.Literals(["rotate", "retire"]),
  cause: Schema.Defect()
}) {
  /** Clients get 503 Service unavailable; the cause goes to the log (see @cairn/domain DocumentedError). */
  readonly unavailable = true
  override get message() {
    return `Could not ${this.operation} the master keys`
  }
}

export class MasterKeys extends Context.Service<MasterKeys, {
  /** Where the keys come from, for the startup log (never a key). */
  readonly source: string
  /** The key new data keys are wrapped under; none when no master key is provisioned. */
  readonly current: Effect.Effect<Option.Option<MasterKey>>
  /** A key by id: the current one, or one kept from before a rotation that has not finished. */
  readonly byId: (id: string) => Effect.Effect<Option.Option<MasterKey>>
  /**
   * Begins a rotation: a new current key; the previous ones stay readable. Fails with RotationUnsupported where keys
   * come from configuration (the operator sets the new key there).
   */
  readonly rotate: Effect.Effect<MasterKey, RotationUnsupported | MasterKeysUnavailable>
  /**
   * Ends a rotation: forgets every key but the current one (called once nothing is wrapped under them). A no-op for
   * configured keys.
   */
  readonly retire: Effect.Effect<void, MasterKeysUnavailable>
}>()("cairn/MasterKeys") {}
