/**
 * The templates Cairn ships (`packages/templates/catalog/<slug>/`), read from disk: each folder is published at
 * startup as a public, featured template under its folder's name (`Templates.publishShipped`).
 */
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import type { TemplateFile } from "../Validate.ts"

export interface ShippedTemplate {
  readonly slug: string
  readonly files: ReadonlyArray<TemplateFile>
}

export const directory = fileURLToPath(new URL("../../catalog/", import.meta.url))

/** Every regular file under `dir` at its `/`-separated path relative to `dir`; `.git/` left out, symlinks reported. */
export const readFolder = async (dir: string): Promise<Array<TemplateFile>> => {
  const entries = await Fs.readdir(dir, { withFileTypes: true, recursive: true })
  const files: Array<TemplateFile> = []
  for (const entry of entries) {
    const path = Path.relative(dir, Path.join(entry.parentPath, entry.name)).split(Path.sep).join("/")
    if (path.split("/").includes(".git")) continue
    if (entry.isSymbolicLink()) files.push({ path, content: new Uint8Array(), kind: "symlink" })
    else if (entry.isFile()) files.push({ path, content: new Uint8Array(await Fs.readFile(Path.join(dir, path))) })
  }
  return files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
}

/** The shipped templates, by slug. */
export const shipped = async (dir: string = directory): Promise<Array<ShippedTemplate>> => {
  const slugs = (await Fs.readdir(dir, { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => e.name).sort()
  return Promise.all(slugs.map(async (slug) => ({ slug, files: await readFolder(Path.join(dir, slug)) })))
}
