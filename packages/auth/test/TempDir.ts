/** A fresh directory under the system temporary directory, removed when the test's scope closes. */
import { Effect } from "effect"
import * as fs from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"

export const make = Effect.acquireRelease(
  Effect.promise(() => fs.mkdtemp(join(tmpdir(), "cairn-auth-"))),
  (dir) => Effect.promise(() => fs.rm(dir, { recursive: true, force: true }))
)

/** The permission bits of a file, e.g. 0o600. */
export const modeOf = (path: string) => Effect.promise(() => fs.stat(path).then((stat) => stat.mode & 0o777))

export const exists = (path: string) => Effect.promise(() => fs.access(path).then(() => true, () => false))

export const list = (dir: string) => Effect.promise(() => fs.readdir(dir))

export const readText = (path: string) => Effect.promise(() => fs.readFile(path, "utf8"))

/** Writes a file with exactly `mode`, whatever the process umask. */
export const writeText = (path: string, content: string, mode = 0o600) =>
  Effect.promise(async () => {
    await fs.writeFile(path, content, { mode })
    await fs.chmod(path, mode)
  })
