/**
 * Secrets the server keeps on disk (the signing key, the admin token): read when the file exists, otherwise created
 * once with mode 0600, so that every process sharing a data directory ends up with the same secret. The content is
 * written to a private temporary file and then hard-linked into place; `link` fails when the name already exists, so
 * the first process to finish wins, the others read the winner's file, and no reader ever sees a half-written one.
 * Contents travel as `Redacted` values, and errors name the file, never its content.
 */
import { Effect, Option, Redacted, Schema } from "effect"
import { randomBytes } from "node:crypto"
import * as fs from "node:fs/promises"
import { dirname } from "node:path"

export class SecretFileError extends Schema.TaggedError<SecretFileError>()("SecretFileError", {
  path: Schema.String,
  reason: Schema.String
}) {
  override get message() {
    return `Cannot use the secret file ${this.path}: ${this.reason}`
  }
}

export interface Loaded {
  readonly content: Redacted.Redacted<string>
  /** True when this call wrote the file, false when it was already there or another process wrote it first. */
  readonly created: boolean
}

const errorCode = (error: unknown): string | undefined => {
  const code = (error as NodeJS.ErrnoException | undefined)?.code
  return typeof code === "string" ? code : undefined
}

// Node's file system messages hold the code, the call and the path, never data; anything else is unexpected and
// is reduced to a fixed text rather than risk echoing something read from the file.
const failure = (path: string) => (error: unknown) =>
  new SecretFileError({
    path,
    reason: errorCode(error) !== undefined && error instanceof Error ? error.message : "unexpected error"
  })

const readIfExists = (path: string) =>
  Effect.tryPromise({
    try: async () => {
      try {
        return Option.some(Redacted.make(await fs.readFile(path, "utf8")))
      } catch (error) {
        if (errorCode(error) === "ENOENT") return Option.none<Redacted.Redacted<string>>()
        throw error
      }
    },
    catch: failure(path)
  }).pipe(Effect.tap((content) => Option.isSome(content) ? warnIfShared(path) : Effect.void))

// The mode is only advice on Windows, and a file the operator made readable by others is theirs to fix: say so,
// but keep serving.
const warnIfShared = (path: string) =>
  Effect.promise(() => fs.stat(path).then((stat) => stat.mode, () => 0)).pipe(
    Effect.flatMap((mode) =>
      process.platform !== "win32" && (mode & 0o077) !== 0
        ? Effect.logWarning(`${path} is readable by other users; run chmod 600 on it`)
        : Effect.void
    )
  )

/** Links the content into place; false when another process created the file first. */
const createExclusively = (path: string, content: Redacted.Redacted<string>) =>
  Effect.tryPromise({
    try: async () => {
      const directory = dirname(path)
      await fs.mkdir(directory, { recursive: true, mode: 0o700 })
      const temporary = `${path}.${process.pid}.${randomBytes(8).toString("hex")}.tmp`
      try {
        const handle = await fs.open(temporary, "wx", 0o600)
        try {
          await handle.writeFile(Redacted.value(content), "utf8")
          await handle.sync()
        } finally {
          await handle.close()
        }
        try {
          await fs.link(temporary, path)
        } catch (error) {
          if (errorCode(error) === "EEXIST") return false
          throw error
        }
        await syncDirectory(directory)
        return true
      } finally {
        await fs.rm(temporary, { force: true })
      }
    },
    catch: failure(path)
  })

// Without this a crash just after the link could lose the new name, and the next start would generate a different
// secret. Some platforms (Windows) cannot open a directory; there the file system's own ordering is all we get.
const syncDirectory = async (directory: string) => {
  const handle = await fs.open(directory, "r").catch(() => undefined)
  if (handle === undefined) return
  try {
    await handle.sync().catch(() => undefined)
  } finally {
    await handle.close()
  }
}

/** Reads an existing secret file; a missing file is an error. */
export const read = (path: string): Effect.Effect<Redacted.Redacted<string>, SecretFileError> =>
  readIfExists(path).pipe(
    Effect.flatMap(Option.match({
      onNone: () => Effect.fail(new SecretFileError({ path, reason: "the file does not exist" })),
      onSome: Effect.succeed
    }))
  )

/**
 * Reads the secret file, or creates it (and its parent directories) with the content `generate` returns. When several
 * processes start at once, all of them return the content of the one file that won.
 */
export const readOrCreate = <E, R>(
  path: string,
  generate: Effect.Effect<Redacted.Redacted<string>, E, R>
): Effect.Effect<Loaded, SecretFileError | E, R> =>
  Effect.gen(function*() {
    const existing = yield* readIfExists(path)
    if (Option.isSome(existing)) return { content: existing.value, created: false }
    const content = yield* generate
    if (yield* createExclusively(path, content)) return { content, created: true }
    return { content: yield* read(path), created: false }
  })
