/**
 * What a crash or an abandoned client leaves in the upload routes' working directories (resumable uploads' files,
 * staged leaves' folders) is removed at the next start once it is older than the directory's own bound.
 */
import { Effect, type FileSystem } from "effect"

/** Removes the entries of `directory` (files or folders) last modified more than `olderThanMillis` ago; how many. */
export const sweep = (fs: FileSystem.FileSystem, directory: string, olderThanMillis: number) =>
  Effect.gen(function*() {
    if (!(yield* fs.exists(directory))) return 0
    const now = Date.now()
    let swept = 0
    for (const name of yield* fs.readDirectory(directory)) {
      const entry = `${directory}/${name}`
      const info = yield* fs.stat(entry)
      // An entry whose time the platform does not tell is kept: it may be in use.
      const modified = info.mtime._tag === "Some" ? info.mtime.value.getTime() : now
      if (now - modified > olderThanMillis) {
        yield* fs.remove(entry, { recursive: true, force: true })
        swept++
      }
    }
    return swept
  })
