/**
 * The dump of an empty PGlite database (`PGlite.dumpDataDir`), from which tests' in-memory databases start instead of
 * running initdb each (PgDatabase.layerPgliteFromDump). Made once per PGlite version and machine, like the data
 * directories' template (PgliteTemplate.ts), and kept beside it as `pglite-<version>.tar`; read once per process.
 * A cache that cannot be read or written only costs an initdb.
 */
import { PGlite } from "@electric-sql/pglite"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import * as PgliteArtifacts from "../PgliteArtifacts.ts"
import * as PgliteSettings from "../PgliteSettings.ts"
import * as PgliteTemplate from "../PgliteTemplate.ts"

const made = async (): Promise<Blob> => {
  const options = { ...(await PgliteArtifacts.prefetch()), startParams: PgliteSettings.startParams(PGlite.defaultStartParams) }
  const db = await PGlite.create(undefined, options)
  try {
    return await db.dumpDataDir("none")
  } finally {
    await db.close()
  }
}

const kept = async (file: string): Promise<Blob> => {
  const cached = await Fs.readFile(file).catch(() => undefined)
  if (cached !== undefined) return new Blob([cached])
  const dump = await made()
  const scratch = `${file}.tmp-${process.pid}-${Math.random().toString(36).slice(2, 8)}`
  try {
    await Fs.mkdir(Path.dirname(file), { recursive: true })
    await Fs.writeFile(scratch, new Uint8Array(await dump.arrayBuffer()))
    await Fs.rename(scratch, file)
  } catch {
    await Fs.rm(scratch, { force: true })
  }
  return dump
}

let dump: Promise<Blob> | undefined

/** The empty database's dump; the first call per process reads it, or makes it and keeps it. */
export const emptyDatabase = (): Promise<Blob> =>
  dump ??= PgliteTemplate.version().then((version) => kept(Path.join(PgliteTemplate.defaultDirectory(), `pglite-${version}.tar`)))
