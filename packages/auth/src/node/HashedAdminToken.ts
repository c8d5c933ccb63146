/**
 * The AdminToken adapter: the token comes from `ADMIN_TOKEN` when set; otherwise it lives in `<dataDir>/admin-token`
 * (mode 0600), generated at first start so that a fresh install is never left open. Candidates are compared by their
 * SHA-256 digests in constant time; local tooling that must send the token reads it with `read`.
 */
import { Config, Effect, Layer, Option, Redacted } from "effect"
import { createHash, randomBytes, timingSafeEqual } from "node:crypto"
import { join } from "node:path"
import { AdminToken, InvalidAdminToken, type Source } from "../AdminToken.ts"
import * as SecretFile from "./SecretFile.ts"

/** Where `layerConfig` keeps the token when `ADMIN_TOKEN` is unset. */
export const tokenFilePath = (dataDir: string) => join(dataDir, "admin-token")

// Hashing first gives `timingSafeEqual` two buffers of equal length whatever the candidate's length, so neither the
// length nor any prefix of the token leaks through timing.
const digest = (value: string) => createHash("sha256").update(value, "utf8").digest()

const describe = (source: Source) => source._tag === "File" ? source.path : "ADMIN_TOKEN"

export const make = (token: Redacted.Redacted<string>, source: Source) =>
  Effect.gen(function*() {
    if (Redacted.value(token).trim() === "") return yield* new InvalidAdminToken({ source: describe(source) })
    const expected = digest(Redacted.value(token))
    return AdminToken.of({
      verify: (candidate) => Effect.sync(() => timingSafeEqual(digest(candidate), expected)),
      source
    })
  })

/** A token given directly, for tests and embedders. */
export const layer = (token: Redacted.Redacted<string>) => Layer.effect(AdminToken, make(token, { _tag: "Config" }))

const generate = Effect.sync(() => Redacted.make(randomBytes(32).toString("base64url")))

// Operators may edit the file; an editor's trailing newline must not become part of the token.
const trimmed = (token: Redacted.Redacted<string>) => Redacted.make(Redacted.value(token).trim())

const fromEnvironment = Config.option(Config.Redacted("ADMIN_TOKEN"))

/**
 * `ADMIN_TOKEN` when set (Effect's Config reads an empty variable as unset); otherwise `<dataDir>/admin-token`,
 * generated (32 random bytes, base64url) at first start.
 */
export const layerConfig = (options: { readonly dataDir: string }) =>
  Layer.effect(
    AdminToken,
    Effect.gen(function*() {
      const configured = yield* fromEnvironment
      if (Option.isSome(configured)) return yield* make(configured.value, { _tag: "Config" })
      const path = tokenFilePath(options.dataDir)
      const { content, created } = yield* SecretFile.readOrCreate(path, generate)
      return yield* make(trimmed(content), { _tag: "File", path, created })
    })
  )

/**
 * The token value for local tooling such as the CLI: `ADMIN_TOKEN` when set, otherwise the file the server
 * generated. It never creates the file: a missing file means the server has not started on this data directory.
 */
export const read = (options: { readonly dataDir: string }) =>
  Effect.gen(function*() {
    const configured = yield* fromEnvironment
    if (Option.isSome(configured)) return configured.value
    const path = tokenFilePath(options.dataDir)
    const token = trimmed(yield* SecretFile.read(path))
    if (Redacted.value(token) === "") return yield* new InvalidAdminToken({ source: path })
    return token
  })
