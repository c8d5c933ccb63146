/** Lays out a catalog directory in LocalCatalog's format, for tests and local registries. */
import { Effect } from "effect"
import * as fs from "node:fs/promises"
import { dirname, join } from "node:path"
import type { HubFields } from "../node/LocalCatalog.ts"

export interface CatalogVersion {
  /** Path inside the skill folder → content. */
  readonly files: Readonly<Record<string, string | Uint8Array>>
  /** The version folder's modification time, which the catalog reads as the version's date. */
  readonly at?: Date | string
}

export interface CatalogSkill {
  readonly versions: Readonly<Record<string, CatalogVersion>>
  /** Written as `<slug>/hub.json`. */
  readonly hub?: HubFields
}

/** Writes each skill's versions (and hub.json) under `dir`, which is created if needed. */
export const writeCatalog = (dir: string, catalog: Readonly<Record<string, CatalogSkill>>) =>
  Effect.promise(async () => {
    await fs.mkdir(dir, { recursive: true })
    for (const [slug, skill] of Object.entries(catalog)) {
      await fs.mkdir(join(dir, slug), { recursive: true })
      if (skill.hub !== undefined) await fs.writeFile(join(dir, slug, "hub.json"), JSON.stringify(skill.hub, null, 2))
      for (const [version, { files, at }] of Object.entries(skill.versions)) {
        const root = join(dir, slug, version)
        for (const [path, content] of Object.entries(files)) {
          await fs.mkdir(dirname(join(root, path)), { recursive: true })
          await fs.writeFile(join(root, path), content)
        }
        await fs.mkdir(root, { recursive: true })
        // Last, since writing the files moves the folder's time.
        if (at !== undefined) await fs.utimes(root, new Date(at), new Date(at))
      }
    }
  })
