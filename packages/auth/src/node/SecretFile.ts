/**
 * Secrets the server keeps on disk (the signing key, the admin token, the master key ring): read when the file
 * exists, otherwise created once with mode 0600, so that every process sharing a data directory ends up with the same
 * secret. The content is written to a private temporary file and then hard-linked into place; `link` fails when the
 * name already exists, so the first process to finish wins, the others read the winner's file, and no reader ever
 * sees a half-written one. A file that changes after creation (a rotated key ring) is replaced by renaming a private
 * temporary file over it, so readers see the old content or the new, never a mix. Contents travel as `Redacted`
 * values, and errors name the file, never its content.
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

export interface ReadOptions {
  /**
   * What a file readable by other users gets: a warning, and it is used (the default, for secrets that guard one
   * installation's endpoints), or a refusal (for keys whose exposure would expose everything they protect).
   */
  readonly ifShared?: "warn" | "refuse"
}

const readIfExists = (path: string, options: ReadOptions) =>
  Effect.tryPromise({
    try: async () => {
      try {
        // The mode is taken from the open file, so it is the mode of the content read, whatever renames happen.
        const handle = await fs.open(path, "r")
        try {
          const { mode } = await handle.stat()
          return Option.some({ content: Redacted.make(await handle.readFile("utf8")), mode })
        } finally {
          await handle.close()
        }
      } catch (error) {
        if (errorCode(error) === "ENOENT") return Option.none<{ content: Redacted.Redacted<string>; mode: number }>()
        throw error
      }
    },
    catch: failure(path)
  }).pipe(
    Effect.flatMap(Option.match({
      onNone: () => Effect.succeedNone,
      onSome: ({ content, mode }) => Effect.as(checkPrivate(path, mode, options), Option.some(content))
    }))
  )

// The mode is only advice on Windows. Elsewhere a file the operator made readable by others is theirs to fix: by
// default say so but keep serving; a caller holding a key to everything refuses it instead.
const checkPrivate = (path: string, mode: number, options: ReadOptions) => {
  if (process.platform === "win32" || (mode & 0o077) === 0) return Effect.void
  return options.ifShared === "refuse"
    ? Effect.fail(
      new SecretFileError({ path, reason: "it is readable by other users; run chmod 600 on it, then start again" })
    )
    : Effect.logWarning(`${path} is readable by other users; run chmod 600 on it`)
}

/**
 * Writes the content to a private temporary file beside `path`, hands it to `place` (which links or renames it into
 * place), then removes what is left of it.
 */
const viaPrivateTemporary = async <A>(path: string, content: Redacted.Redacted<string>, place: (temporary: string, directory: string) => Promise<A>) => {
  const directory = dirname(path)
  await fs.mkdir(directory, { recursive: true, mode: 0o700 })
  const temporary = `${path}.${process.pid}.${randomBytes(8).toString("hex")}.tmp`
  try {
    await writePrivately(temporary, content)
    return await place(temporary, directory)
  } finally {
    await fs.rm(temporary, { force: true })
  }
}

/** Links the content into place; false when another process created the file first. */
const createExclusively = (path: string, content: Redacted.Redacted<string>) =>
  Effect.tryPromise({
    try: () =>
      viaPrivateTemporary(path, content, async (temporary, directory) => {
        try {
          await fs.link(temporary, path)
        } catch (error) {
          if (errorCode(error) === "EEXIST") return false
          throw error
        }
        await syncDirectory(directory)
        return true
      }),
    catch: failure(path)
  })

// A new file only this user can read, with its content on disk before anyone links or renames it into place.
const writePrivately = async (path: string, content: Redacted.Redacted<string>) => {
  const handle = await fs.open(path, "wx", 0o600)
  try {
    await handle.writeFile(Redacted.value(content), "utf8")
    await handle.sync()
  } finally {
    await handle.close()
  }
}

// Without this a crash just after the link (or the rename) could lose the new name, and the next start would find no
// secret, or an old one. Some platforms (Windows) cannot open a directory; there the file system's own ordering is
// all we get.
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
export const read = (
  path: string,
  options: ReadOptions = {}
): Effect.Effect<Redacted.Redacted<string>, SecretFileError> =>
  readIfExists(path, options).pipe(
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
  generate: Effect.Effect<Redacted.Redacted<string>, E, R>,
  options: ReadOptions = {}
): Effect.Effect<Loaded, SecretFileError | E, R> =>
  Effect.gen(function*() {
    const existing = yield* readIfExists(path, options)
    if (Option.isSome(existing)) return { content: existing.value, created: false }
    const content = yield* generate
    if (yield* createExclusively(path, content)) return { content, created: true }
    return { content: yield* read(path, options), created: false }
  })

/**
 * Replaces the content of a secret file (creating it when missing) with mode 0600. The new content goes to a private
 * temporary file beside it, which is then renamed over the old one: a crash or a concurrent reader sees the old
 * content or the new, never a partial file.
 */
export const replace = (path: string, content: Redacted.Redacted<string>): Effect.Effect<void, SecretFileError> =>
  Effect.tryPromise({
    try: () =>
      viaPrivateTemporary(path, content, async (temporary, directory) => {
        await fs.rename(temporary, path)
        await syncDirectory(directory)
      }),
    catch: failure(path)
  })
