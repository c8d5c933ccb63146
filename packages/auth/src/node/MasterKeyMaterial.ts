/**
 * Master keys as the MasterKeys adapters hold them: parsed from base64 (configuration, a key file) or freshly
 * generated, imported as non-extractable AES-GCM keys and named by their fingerprint. The base64 text is kept beside
 * the key, in a `Redacted` value, only because a key file must be rewritten with it; the raw bytes are wiped once
 * imported. Only WebCrypto (`crypto.subtle`, `crypto.getRandomValues`) is used, so this runs on Node, Bun and Deno.
 */
import { Effect, Redacted, Result } from "effect"
import { Base64, Hex } from "effect/encoding"
import { InvalidMasterKey, type MasterKey } from "../MasterKeys.ts"

export interface Material {
  readonly key: MasterKey
  /** The key as base64, for writing a key file. */
  readonly encoded: Redacted.Redacted<string>
}

const keyBytes = 32

// Standard, padded base64 of exactly 32 bytes: 43 characters and one `=`, what `openssl rand -base64 32` prints.
// Checking the shape first means a value of the wrong length is refused before anything decodes it.
const encodedKey = /^[A-Za-z0-9+/]{43}=$/

/** What a key id looks like; anything else found where an id belongs is not repeated in messages. */
export const isKeyId = (text: string) => /^mk-[0-9a-f]{12}$/.test(text)

/** `mk-` and the first 12 hex digits of the key's SHA-256: stable across restarts and safe to log. */
const idOf = async (raw: Uint8Array<ArrayBuffer>) =>
  `mk-${Hex.encode(new Uint8Array(await crypto.subtle.digest("SHA-256", raw)).subarray(0, 6))}`

const importRaw = (raw: Uint8Array<ArrayBuffer>, encoded: Redacted.Redacted<string>): Effect.Effect<Material> =>
  Effect.promise(async () => {
    try {
      const id = await idOf(raw)
      const key = await crypto.subtle.importKey("raw", raw, { name: "AES-GCM" }, false, ["encrypt", "decrypt"])
      return { key: { id, key }, encoded }
    } finally {
      raw.fill(0)
    }
  })

/**
 * Parses a base64 master key; surrounding whitespace (an editor's or a shell's newline) is ignored. `source` names
 * the variable or file in the error, which never holds the value.
 */
export const decode = (encoded: Redacted.Redacted<string>, source: string): Effect.Effect<Material, InvalidMasterKey> =>
  Effect.suspend(() => {
    const text = Redacted.value(encoded).trim()
    const raw = encodedKey.test(text) ? Base64.decode(text) : undefined
    // The decoder's own error quotes its input, which is the key: it is dropped, not wrapped.
    if (raw === undefined || Result.isFailure(raw) || raw.success.length !== keyBytes) {
      return Effect.fail(
        new InvalidMasterKey({
          source,
          problem: "expected the base64 of exactly 32 random bytes, such as `openssl rand -base64 32` prints"
        })
      )
    }
    const bytes = new Uint8Array(raw.success)
    raw.success.fill(0)
    return importRaw(bytes, Redacted.make(text))
  })

/** A fresh random key. */
export const generate: Effect.Effect<Material> = Effect.suspend(() => {
  const raw = crypto.getRandomValues(new Uint8Array(keyBytes))
  return importRaw(raw, Redacted.make(Base64.encode(raw)))
})
