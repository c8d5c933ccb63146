/** Reading a data directory as text, for tests that search it for what must never be written there. */
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"

/** The regular files under `dir`, at any depth. */
export const filesUnder = (dir: string): Array<string> =>
  readdirSync(dir, { withFileTypes: true, recursive: true }).filter((entry) => entry.isFile()).map((entry) => join(entry.parentPath, entry.name))

/** A file's bytes as text (latin1, so every byte is a character); empty when it vanished meanwhile, as a running gateway's files may. */
export const textOf = (file: string) => {
  try {
    return readFileSync(file).toString("latin1")
  } catch {
    return ""
  }
}
