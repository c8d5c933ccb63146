/**
 * A new embedded database from a copy of an empty one. PGlite initialises an empty directory by running initdb,
 * which costs several CPU seconds (it builds the catalogs of three databases) and gives the same files every time
 * for one PGlite version. So the first initialisation on a machine is done in a scratch directory, closed cleanly,
 * and kept as a template (`<templates>/pglite-<version>`, one per PGlite version); every later empty data directory
 * is a copy of it (about 40 MB of files), which PGlite then opens as it opens any existing database. The template is
 * only ever what initdb made: Cairn's tables are created by the migrations, as on any start.
 * Any failure here (a cache that cannot be written, say) leaves the directory to PGlite's own initdb.
 */
import type { PGliteOptions } from "@electric-sql/pglite"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"

/** Where templates are kept unless configured: the user's cache directory. */
export const defaultDirectory = () => Path.join(process.env["XDG_CACHE_HOME"] || Path.join(Os.homedir(), ".cache"), "cairn")

const exists = (path: string) => Fs.access(path).then(() => true, () => false)

/** The PGlite version installed: an empty database's files depend on it. */
export const version = async () => {
  const manifest = new URL("../package.json", import.meta.resolve("@electric-sql/pglite"))
  return (JSON.parse(await Fs.readFile(manifest, "utf8")) as { version: string }).version
}

/** A sibling path no other process uses. */
const scratch = (path: string) => `${path}.tmp-${process.pid}-${Math.random().toString(36).slice(2, 8)}`

/** Renames `from` to `to`; false when `to` was made meanwhile (by another process: theirs is kept). */
const settle = (from: string, to: string) =>
  Fs.rename(from, to).then(() => true, async () => {
    await Fs.rm(from, { recursive: true, force: true })
    return false
  })

/** Copies a new database to `template`; a cache that cannot be written is no failure, only a slower next time. */
const keep = async (database: string, template: string) => {
  const next = scratch(template)
  try {
    await Fs.mkdir(Path.dirname(template), { recursive: true })
    await Fs.cp(database, next, { recursive: true })
    await settle(next, template)
  } catch {
    await Fs.rm(next, { recursive: true, force: true })
  }
}

/**
 * Makes `dataDir` an initialised, empty PGlite database when it does not exist yet: a copy of the template, made
 * first if there is none. Leaves any existing directory alone.
 */
export const initialise = async (dataDir: string, templates: string, options: PGliteOptions): Promise<void> => {
  if (await exists(dataDir)) return
  const copy = scratch(dataDir)
  try {
    const template = Path.join(templates, `pglite-${await version()}`)
    await Fs.mkdir(Path.dirname(dataDir), { recursive: true })
    if (await exists(Path.join(template, "PG_VERSION"))) {
      await Fs.cp(template, copy, { recursive: true })
    } else {
      // The first on this machine: initdb here, then the template is a copy of it, made before it is ever opened.
      // Loaded here only: the rest of this module is read before PGlite is needed (PgliteWorker.ts).
      const { PGlite } = await import("@electric-sql/pglite")
      const db = await PGlite.create(copy, options)
      await db.close()
      await keep(copy, template)
    }
    await settle(copy, dataDir)
  } catch {
    // PGlite initialises the directory itself.
    await Fs.rm(copy, { recursive: true, force: true })
  }
}
