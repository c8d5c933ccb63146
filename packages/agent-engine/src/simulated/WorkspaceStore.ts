/**
 * A simulated agent's workspace as a disk would hold it: files (bytes and permission bits), folders and symlinks, by
 * relative path. A folder exists through what is in it (mode 0o755) or on its own (an installed skill's folder, a
 * restored one, with its mode). Every write stores a copy, a new array, so an array's identity is its content's
 * version: fingerprints number the arrays, and so change whenever any operation replaces a file's content. The
 * console's shell (MiniShell.ts) reads `files` and `folderPaths()`; it does not see symlinks.
 */
import { type Excluded, excludedOrWithin, type RestoreEntry, type WorkspaceEntry } from "../WorkspaceTree.ts"

/** The modes a disk gives what Cairn writes without saying: data files, folders; and what Linux shows for a symlink. */
export const fileMode = 0o644
export const folderMode = 0o755
export const symlinkMode = 0o777

type FileEntry = Extract<RestoreEntry, { readonly kind: "file" }>

/** What a restore will do, worked out before the content of the files it writes is read. */
export interface RestorePlan {
  /** The tree's entries that are not excluded. */
  readonly wanted: ReadonlyArray<RestoreEntry>
  /** The files whose content must be read; the others are kept, as they are now (`kept`). */
  readonly toWrite: ReadonlyArray<FileEntry>
  readonly kept: ReadonlyMap<string, Uint8Array>
  readonly isExcluded: (path: string) => boolean
}

/** Sibling order: by code point (which is the order of their UTF-8 bytes), not by UTF-16 code unit. */
export const byCodePoint = (a: string, b: string): number => {
  const [x, y] = [Array.from(a, (char) => char.codePointAt(0)!), Array.from(b, (char) => char.codePointAt(0)!)]
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i]! - y[i]!
  return x.length - y.length
}

const ancestors = (path: string): Array<string> => {
  const found: Array<string> = []
  for (let slash = path.indexOf("/"); slash >= 0; slash = path.indexOf("/", slash + 1)) found.push(path.slice(0, slash))
  return found
}

const isAtOrUnder = (path: string, folder: string) => path === folder || path.startsWith(`${folder}/`)

export class WorkspaceStore {
  private fileContents = new Map<string, Uint8Array>()
  private modes = new Map<string, number>()
  /** Folders that exist on their own, with their modes; others are implied by the paths under them. */
  private folders = new Map<string, number>()
  private symlinks = new Map<string, string>()
  private readonly versions = new WeakMap<Uint8Array, number>()
  private nextVersion = 0

  /** The files' bytes by path. */
  get files(): ReadonlyMap<string, Uint8Array> {
    return this.fileContents
  }

  isFolder(path: string): boolean {
    if (this.folders.has(path)) return true
    const prefix = `${path}/`
    for (const map of [this.fileContents, this.folders, this.symlinks]) {
      for (const key of map.keys()) if (key.startsWith(prefix)) return true
    }
    return false
  }

  exists(path: string): boolean {
    return this.files.has(path) || this.symlinks.has(path) || this.isFolder(path)
  }

  /** The folders that exist on their own, for the shell (which sees the others through the files in them). */
  folderPaths(): ReadonlySet<string> {
    return new Set(this.folders.keys())
  }

  /** Why a file cannot be written at `path`, or undefined: a file or symlink where a folder goes, a folder in its place. */
  conflictAt(path: string): string | undefined {
    for (const folder of ancestors(path)) {
      if (this.files.has(folder)) return `${folder} is a file, not a folder`
      if (this.symlinks.has(folder)) return `${folder} is a symlink`
    }
    return this.isFolder(path) ? `${path} is a folder` : undefined
  }

  /** Writes a copy of `content` (a symlink in its place is replaced, as a rename over it would). */
  writeFile(path: string, content: Uint8Array, mode: number) {
    this.symlinks.delete(path)
    this.fileContents.set(path, content.slice())
    this.modes.set(path, mode)
  }

  /** Changes a file as the agent would: new content, same mode (a new file gets the default); undefined deletes it. */
  editFile(path: string, content: Uint8Array | undefined) {
    if (content === undefined) {
      this.fileContents.delete(path)
      this.modes.delete(path)
    } else {
      this.writeFile(path, content, this.modes.get(path) ?? fileMode)
    }
  }

  /** Makes `path` a folder of its own (its parents are implied by it). */
  makeFolder(path: string) {
    if (!this.folders.has(path)) this.folders.set(path, folderMode)
  }

  /** Removes `path` and everything under it. */
  removeTree(path: string) {
    for (const map of [this.fileContents, this.modes, this.folders, this.symlinks]) {
      for (const key of [...map.keys()]) if (isAtOrUnder(key, path)) map.delete(key)
    }
  }

  /** The symlinks at or under `folder`, by path. */
  symlinksUnder(folder: string): ReadonlyArray<readonly [string, string]> {
    return [...this.symlinks].filter(([path]) => isAtOrUnder(path, folder))
  }

  /** The file's change token: the number of the array it holds now. */
  fingerprint(content: Uint8Array): string {
    let version = this.versions.get(content)
    if (version === undefined) this.versions.set(content, version = ++this.nextVersion)
    return `v${version}`
  }

  /** Every entry, depth first, parents before children, siblings by code point; excluded ones are not descended into. */
  scan(exclude: Excluded): Array<WorkspaceEntry> {
    const kinds = new Map<string, WorkspaceEntry["kind"]>()
    const add = (path: string, kind: WorkspaceEntry["kind"]) => {
      kinds.set(path, kind)
      for (const folder of ancestors(path)) kinds.set(folder, "directory")
    }
    for (const path of this.folders.keys()) add(path, "directory")
    for (const path of this.files.keys()) add(path, "file")
    for (const path of this.symlinks.keys()) add(path, "symlink")
    const children = new Map<string, Array<string>>()
    for (const path of kinds.keys()) {
      const slash = path.lastIndexOf("/")
      const parent = slash < 0 ? "" : path.slice(0, slash)
      const siblings = children.get(parent) ?? []
      siblings.push(path.slice(slash + 1))
      children.set(parent, siblings)
    }
    const entries: Array<WorkspaceEntry> = []
    const walk = (folder: string) => {
      for (const name of (children.get(folder) ?? []).sort(byCodePoint)) {
        const path = folder === "" ? name : `${folder}/${name}`
        if (exclude(path)) continue
        const kind = kinds.get(path)!
        if (kind === "file") {
          const content = this.files.get(path)!
          entries.push({ path, kind, mode: this.modes.get(path) ?? fileMode, size: content.length, fingerprint: this.fingerprint(content) })
        } else if (kind === "symlink") {
          entries.push({ path, kind, mode: symlinkMode, size: 0, target: this.symlinks.get(path)! })
        } else {
          entries.push({ path, kind, mode: this.folders.get(path) ?? folderMode, size: 0 })
          walk(path)
        }
      }
    }
    walk("")
    return entries
  }

  /** A file's bytes, never through a symlink; a string saying why when there is no such file. */
  readEntry(path: string): Uint8Array | string {
    for (const folder of ancestors(path)) if (this.symlinks.has(folder)) return `${folder} is a symlink`
    if (this.symlinks.has(path)) return `${path} is a symlink`
    return this.files.get(path) ?? `${path} is no file`
  }

  /**
   * What a restore to `entries` does: excluded entries (or under an excluded folder; the predicate is not asked below
   * one) are left out, and a file whose fingerprint is its `unchangedIf` is kept as it is.
   */
  plan(entries: ReadonlyArray<RestoreEntry>, exclude: Excluded): RestorePlan {
    const isExcluded = excludedOrWithin(exclude)
    const wanted = entries.filter((entry) => !isExcluded(entry.path))
    const kept = new Map<string, Uint8Array>()
    const toWrite: Array<FileEntry> = []
    for (const entry of wanted) {
      if (entry.kind !== "file") continue
      const current = this.files.get(entry.path)
      if (current !== undefined && entry.unchangedIf !== undefined && this.fingerprint(current) === entry.unchangedIf) {
        kept.set(entry.path, current)
      } else {
        toWrite.push(entry)
      }
    }
    return { wanted, toWrite, kept, isExcluded }
  }

  /**
   * Makes the workspace exactly the plan's tree with `written` as the content of the files it had to write. Excluded
   * entries stay, and so do the folders holding them (with their modes), unless the tree puts a file or symlink where
   * such a folder is: the tree wins.
   */
  restore(plan: RestorePlan, written: ReadonlyMap<string, Uint8Array>) {
    const leaves = new Set(plan.wanted.filter((entry) => entry.kind !== "directory").map((entry) => entry.path))
    const stays = (path: string) => plan.isExcluded(path) && !ancestors(path).some((folder) => leaves.has(folder))
    const files = new Map<string, Uint8Array>()
    const modes = new Map<string, number>()
    const folders = new Map<string, number>()
    const symlinks = new Map<string, string>()
    const keepHolders = (path: string) => {
      for (const folder of ancestors(path)) if (!folders.has(folder)) folders.set(folder, this.folders.get(folder) ?? folderMode)
    }
    for (const [path, content] of this.files) {
      if (stays(path)) {
        files.set(path, content)
        modes.set(path, this.modes.get(path) ?? fileMode)
        keepHolders(path)
      }
    }
    for (const [path, target] of this.symlinks) {
      if (stays(path)) {
        symlinks.set(path, target)
        keepHolders(path)
      }
    }
    for (const [path, mode] of this.folders) {
      if (stays(path)) {
        folders.set(path, mode)
        keepHolders(path)
      }
    }
    // The tree's folders, implied ones included, take the tree's modes.
    for (const entry of plan.wanted) {
      for (const folder of ancestors(entry.path)) folders.set(folder, folderMode)
    }
    for (const entry of plan.wanted) {
      if (entry.kind === "directory") folders.set(entry.path, entry.mode)
    }
    for (const entry of plan.wanted) {
      if (entry.kind === "symlink") symlinks.set(entry.path, entry.target)
      if (entry.kind === "file") {
        files.set(entry.path, plan.kept.get(entry.path) ?? written.get(entry.path)!.slice())
        modes.set(entry.path, entry.mode)
      }
    }
    this.fileContents = files
    this.modes = modes
    this.folders = folders
    this.symlinks = symlinks
  }
}
