/**
 * Envelope encryption of workspace secrets. Each workspace has a random 256-bit data key; each value is sealed
 * with AES-256-GCM under it, with a fresh nonce and associated data binding the ciphertext to its workspace, secret
 * and value version. Data keys are stored only wrapped (AES-256-GCM) under a master key from the MasterKeys port, in
 * `cairn_data_keys`: a mutable table, not the event log, so that destroying a workspace's row destroys every
 * ciphertext of it the immutable log holds (crypto-shredding). Everything here is WebCrypto, so it runs on Node,
 * Bun and Deno; a value is only ever plaintext inside `Redacted`.
 */
import { type MasterKey, MasterKeys } from "@cairn/auth"
import { Secret } from "@cairn/domain"
import { Context, Effect, Layer, Option, Redacted, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { createTogether } from "../SchemaSetup.ts"

/** A sealed value could not be opened: tampered with, moved onto another secret, or its workspace's key is gone. */
export class SecretUnreadable extends Schema.TaggedError<SecretUnreadable>()("SecretUnreadable", {
  secretId: Schema.String,
  reason: Schema.String
}) {
  readonly status = 500
  override get message() {
    return `Secret ${this.secretId} could not be decrypted: ${this.reason}`
  }
}

const encoder = new TextEncoder()
const decoder = new TextDecoder()
const toBase64 = (bytes: Uint8Array) => btoa(Array.from(bytes, (b) => String.fromCharCode(b)).join(""))
const fromBase64 = (text: string) => Uint8Array.from(atob(text), (c) => c.charCodeAt(0))
// WebCrypto's own types, named through the global `crypto` (no DOM lib and no `node:` import here).
type CryptoKey = Awaited<ReturnType<typeof crypto.subtle.importKey>>
type Bytes = Parameters<typeof crypto.subtle.encrypt>[2]
const aesGcm = (iv: Uint8Array, additionalData: string): Parameters<typeof crypto.subtle.encrypt>[0] => ({
  name: "AES-GCM",
  iv: iv as Bytes,
  additionalData: encoder.encode(additionalData) as Bytes
})

/** What a wrapped data key is bound to: its workspace and its own id. */
const dataKeyAssociatedData = (workspaceId: string, keyId: string) => `cairn/data-key/v1\u0000${workspaceId}\u0000${keyId}`

interface DataKeyRow {
  readonly key_id: string
  readonly master_key_id: string
  readonly nonce: string
  readonly wrapped: string
}

interface DataKey {
  readonly keyId: string
  readonly key: CryptoKey
}

export class SecretVault extends Context.Service<SecretVault>()("cairn/SecretVault", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const masterKeys = yield* MasterKeys
    yield* createTogether(sql, sql`CREATE TABLE IF NOT EXISTS cairn_data_keys (
      workspace_id text PRIMARY KEY, key_id text NOT NULL, master_key_id text NOT NULL, nonce text NOT NULL,
      wrapped text NOT NULL, created_at timestamptz NOT NULL DEFAULT now())`).pipe(Effect.orDie)
    // Unwrapped data keys, as non-extractable CryptoKeys; a shredded workspace's is dropped at once.
    const cache = new Map<string, DataKey>()

    const rowOf = (workspaceId: string) =>
      sql<DataKeyRow>`SELECT key_id, master_key_id, nonce, wrapped FROM cairn_data_keys WHERE workspace_id = ${workspaceId}`.pipe(
        Effect.orDie,
        Effect.map(([row]) => Option.fromNullishOr(row))
      )

    const importDataKey = (raw: Uint8Array) =>
      Effect.promise(() => crypto.subtle.importKey("raw", raw as Bytes, "AES-GCM", false, ["encrypt", "decrypt"])).pipe(
        Effect.ensuring(Effect.sync(() => raw.fill(0)))
      )

    const unwrap = (workspaceId: string, row: DataKeyRow) =>
      Effect.gen(function*() {
        const master = yield* masterKeys.byId(row.master_key_id)
        if (Option.isNone(master)) return Option.none<DataKey>()
        const raw = yield* Effect.tryPromise(() =>
          crypto.subtle.decrypt(aesGcm(fromBase64(row.nonce), dataKeyAssociatedData(workspaceId, row.key_id)), master.value.key, fromBase64(row.wrapped) as Bytes)
        ).pipe(Effect.option)
        if (Option.isNone(raw)) return Option.none<DataKey>()
        return Option.some({ keyId: row.key_id, key: yield* importDataKey(new Uint8Array(raw.value)) })
      })

    const wrap = (workspaceId: string, keyId: string, raw: Uint8Array, master: MasterKey) =>
      Effect.promise(async () => {
        const nonce = crypto.getRandomValues(new Uint8Array(12))
        const wrapped = new Uint8Array(await crypto.subtle.encrypt(aesGcm(nonce, dataKeyAssociatedData(workspaceId, keyId)), master.key, raw as Bytes))
        return { nonce: toBase64(nonce), wrapped: toBase64(wrapped) }
      })

    /** The workspace's data key, if it has one that this node's master keys can unwrap. */
    const existingKey = (workspaceId: string) =>
      Effect.gen(function*() {
        const cached = cache.get(workspaceId)
        if (cached !== undefined) return Option.some(cached)
        const row = yield* rowOf(workspaceId)
        if (Option.isNone(row)) return Option.none<DataKey>()
        const key = yield* unwrap(workspaceId, row.value)
        if (Option.isSome(key)) cache.set(workspaceId, key.value)
        return key
      })

    /** The workspace's data key, made on first use under the current master key (the first of two racing wins). */
    const keyForSealing = (workspaceId: string) =>
      Effect.gen(function*() {
        const master = yield* masterKeys.current
        if (Option.isNone(master)) return yield* new Secret.SecretsNotConfigured()
        const existing = yield* existingKey(workspaceId)
        if (Option.isSome(existing)) return existing.value
        const keyId = `dk-${crypto.randomUUID()}`
        const raw = crypto.getRandomValues(new Uint8Array(32))
        const { nonce, wrapped } = yield* wrap(workspaceId, keyId, raw, master.value)
        raw.fill(0)
        yield* sql`INSERT INTO cairn_data_keys (workspace_id, key_id, master_key_id, nonce, wrapped)
          VALUES (${workspaceId}, ${keyId}, ${master.value.id}, ${nonce}, ${wrapped}) ON CONFLICT (workspace_id) DO NOTHING`.pipe(Effect.orDie)
        const made = yield* existingKey(workspaceId)
        if (Option.isNone(made)) return yield* Effect.die(new Error(`the data key of workspace ${workspaceId} cannot be unwrapped`))
        return made.value
      })

    /** Whether a master key is provisioned: without one, nothing can be sealed (503 Secrets not configured). */
    const configured = Effect.map(masterKeys.current, Option.isSome)

    const seal = (workspaceId: string, secretId: string, version: number, value: Redacted.Redacted<string>) =>
      Effect.gen(function*() {
        const { keyId, key } = yield* keyForSealing(workspaceId)
        return yield* Effect.promise(async (): Promise<Secret.Sealed> => {
          const nonce = crypto.getRandomValues(new Uint8Array(12))
          const plaintext = encoder.encode(Redacted.value(value))
          const ciphertext = new Uint8Array(await crypto.subtle.encrypt(aesGcm(nonce, Secret.associatedData(workspaceId, secretId, version)), key, plaintext))
          plaintext.fill(0)
          return { keyId, nonce: toBase64(nonce), ciphertext: toBase64(ciphertext) }
        })
      })

    const open = (workspaceId: string, secretId: string, version: number, sealed: Secret.Sealed) =>
      Effect.gen(function*() {
        const dataKey = yield* existingKey(workspaceId)
        if (Option.isNone(dataKey)) return yield* new SecretUnreadable({ secretId, reason: "its workspace's data key is gone or cannot be unwrapped" })
        if (dataKey.value.keyId !== sealed.keyId) return yield* new SecretUnreadable({ secretId, reason: "it was sealed under another data key" })
        const plaintext = yield* Effect.tryPromise(() =>
          crypto.subtle.decrypt(aesGcm(fromBase64(sealed.nonce), Secret.associatedData(workspaceId, secretId, version)), dataKey.value.key, fromBase64(sealed.ciphertext) as Bytes)
        ).pipe(Effect.mapError(() => new SecretUnreadable({ secretId, reason: "the ciphertext does not authenticate (tampered with, or not this secret's)" })))
        const bytes = new Uint8Array(plaintext)
        const value = Redacted.make(decoder.decode(bytes))
        bytes.fill(0)
        return value
      })

    /** Destroys the workspace's data key: every value it sealed, in the log or anywhere else, is unreadable from now on. */
    const shred = (workspaceId: string) =>
      sql`DELETE FROM cairn_data_keys WHERE workspace_id = ${workspaceId}`.pipe(
        Effect.orDie,
        Effect.andThen(Effect.sync(() => void cache.delete(workspaceId)))
      )

    /**
     * Rewraps every data key under the current master key (after `MasterKeys.rotate` where the keys are Cairn's own
     * file), without touching a single sealed value, then lets the old master keys go. Safe while the server
     * serves: each row moves by compare-and-set, and data keys stay readable under either master key until the end.
     */
    const rotateMasterKey = Effect.gen(function*() {
      const rotated = yield* masterKeys.rotate.pipe(
        Effect.map(Option.some),
        Effect.catchTag("RotationUnsupported", () => Effect.succeedNone)
      )
      const current = Option.isSome(rotated) ? rotated : yield* masterKeys.current
      if (Option.isNone(current)) return yield* new Secret.SecretsNotConfigured()
      let rewrapped = 0
      // Twice over: a data key made under the old master key while the first pass ran is caught by the second.
      for (let pass = 0; pass < 2; pass++) {
        const rows = yield* sql<DataKeyRow & { readonly workspace_id: string }>`
          SELECT workspace_id, key_id, master_key_id, nonce, wrapped FROM cairn_data_keys WHERE master_key_id <> ${current.value.id}`.pipe(Effect.orDie)
        for (const row of rows) {
          const master = yield* masterKeys.byId(row.master_key_id)
          if (Option.isNone(master)) return yield* Effect.die(new Error(`data key of workspace ${row.workspace_id} is wrapped under ${row.master_key_id}, which is not configured`))
          const raw = yield* Effect.promise(() =>
            crypto.subtle.decrypt(aesGcm(fromBase64(row.nonce), dataKeyAssociatedData(row.workspace_id, row.key_id)), master.value.key, fromBase64(row.wrapped) as Bytes)
          )
          const bytes = new Uint8Array(raw)
          const { nonce, wrapped } = yield* wrap(row.workspace_id, row.key_id, bytes, current.value)
          bytes.fill(0)
          const moved = yield* sql`UPDATE cairn_data_keys SET master_key_id = ${current.value.id}, nonce = ${nonce}, wrapped = ${wrapped}
            WHERE workspace_id = ${row.workspace_id} AND master_key_id = ${row.master_key_id} RETURNING workspace_id`.pipe(Effect.orDie)
          rewrapped += moved.length
        }
      }
      yield* masterKeys.retire
      return { masterKeyId: current.value.id, rewrapped }
    })

    return { configured, seal, open, shred, rotateMasterKey }
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
