/**
 * The workspace-tree operations of the AgentEngine port on disk (WorkspaceTree in @cairn/agent-engine): scan the
 * workspace, stream one file, restore a tree. The agent may change its workspace while Cairn works in it (its console
 * runs whenever asked) and may put symlinks anywhere, so no path is trusted twice: every folder is opened without
 * following symlinks (O_NOFOLLOW), from the agent's home down, and everything done in a folder goes through that open
 * folder (HomeFiles.ts, which every access of Cairn's to an agent's home goes through). A folder swapped for a symlink
 * half way is then refused, never followed.
 *
 * Entries whose path the port cannot carry (a name that is not UTF-8, a backslash, longer than WorkspacePath allows)
 * are treated as excluded: neither listed nor touched. Sockets, FIFOs and devices are not listed, and a restore removes
 * them. Files are written under a temporary name beside their place (`.cairn-<random>`) and renamed over it, as
 * Workspace.ts writes them; nothing is fsynced. Every file is owned by Cairn's user, which the sandbox maps to the
 * agent's (Sandbox.ts), as Workspace.ts leaves them. Failures are thrown; the adapter makes them EngineUnavailable.
 *
 * Reads of metadata (listing a folder, lstat, readlink, opening a folder) are made synchronously: through libuv's
 * thread pool each costs some 50 µs, several times the system call, and a scan makes thousands. The event loop is given
 * back every few milliseconds (`pacer`), so that a large workspace never holds up the server for long. Everything that
 * writes (creating, renaming, removing, chmod, file data) goes through the thread pool, several at once: such calls can
 * wait on the disk's journal for milliseconds.
 */
import { type Excluded, excludedOrWithin, type RestoreEntry, type WorkspaceEntry, WorkspacePath } from "@cairn/agent-engine"
import { Effect, Stream } from "effect"
import { randomBytes } from "node:crypto"
import * as Fs from "node:fs"
import * as FsPromises from "node:fs/promises"
import * as Path from "node:path"
import * as HomeFiles from "./HomeFiles.ts"
import { at, close, code, type Folder, openFolder, viaProc, WorkspaceEscape } from "./HomeFiles.ts"

/** Where a workspace is: the agent's home (Cairn's, trusted as a path) and the workspace's path under it. */
export interface Location {
  readonly home: string
  readonly workspace: string
}

/** A file changed this recently may change again within its timestamps' granularity: its fingerprint is left out. */
export const racyWindowNs = 2_000_000_000n

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_DIRECTORY, O_NONBLOCK } = Fs.constants
/** Linux's O_PATH (Node has no constant for it): a handle on an inode that needs no permission on it. */
const O_PATH = 0o10000000

/** Gone, or no longer a folder on the way: the workspace changed under the operation. */
const isGone = (error: unknown) => code(error) === "ENOENT" || code(error) === "ENOTDIR" || code(error) === "ELOOP"

/** Runs `operation`, or gives undefined when what it works on is gone (see isGone). */
const unlessGone = <A>(operation: () => A): A | undefined => {
  try {
    return operation()
  } catch (error) {
    if (isGone(error)) return undefined
    throw error
  }
}

const orUndefinedIfGone = (error: unknown): undefined => {
  if (isGone(error)) return undefined
  throw error
}

/** A name as the port carries it: UTF-8 that decodes and encodes back to the same bytes, or undefined. */
const nameOf = (raw: Buffer): string | undefined => {
  const name = raw.toString("utf8")
  return Buffer.from(name, "utf8").equals(raw) ? name : undefined
}

const join = (prefix: string, name: string) => (prefix === "" ? name : `${prefix}/${name}`)

const modeOf = (stat: { readonly mode: number | bigint }) => Number(stat.mode) & 0o7777

/** Size, modification and change times in nanoseconds, inode: any write through any path changes one of them. */
const fingerprintOf = (stat: Fs.BigIntStats) => `${stat.size}:${stat.mtimeNs}:${stat.ctimeNs}:${stat.ino}`

/** Gives the event loop back once synchronous work has held it for a few milliseconds since the last time. */
const pacer = () => {
  let since = performance.now()
  return async () => {
    if (performance.now() - since < 8) return
    await new Promise((resolve) => setImmediate(resolve))
    since = performance.now()
  }
}

/** How many writing calls a restore has under way at once. */
const writers = 16

/** Runs `task` on every item, at most `limit` at once; the first failure is thrown once the tasks under way ended. */
const inParallel = async <A>(items: ReadonlyArray<A>, task: (item: A) => Promise<unknown>, limit = writers): Promise<void> => {
  let next = 0
  let failure: { readonly error: unknown } | undefined
  const worker = async () => {
    while (failure === undefined && next < items.length) {
      const item = items[next++]!
      try {
        await task(item)
      } catch (error) {
        failure ??= { error }
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker))
  if (failure !== undefined) throw failure.error
}

/**
 * The workspace, opened through every folder from the home down without following a symlink (HomeFiles); undefined
 * when it (or a folder on the way) does not exist and `create` is false. With `create`, missing folders are made.
 */
const openWorkspace = (location: Location, create: boolean): Folder | undefined => {
  const relative = Path.relative(location.home, location.workspace)
  if (relative === "" || Path.isAbsolute(relative) || relative.split(Path.sep).includes("..")) throw new WorkspaceEscape(location.workspace)
  return HomeFiles.openDir(location.home, relative.split(Path.sep).join("/"), create)
}

type Kind = "file" | "directory" | "symlink" | "other"

/** What a folder entry is, from its dirent, or lstat where the filesystem does not say; undefined once gone. */
const kindOf = (folder: Folder, dirent: Fs.Dirent<Buffer>): Kind | undefined => {
  if (dirent.isFile()) return "file"
  if (dirent.isDirectory()) return "directory"
  if (dirent.isSymbolicLink()) return "symlink"
  if (dirent.isFIFO() || dirent.isSocket() || dirent.isBlockDevice() || dirent.isCharacterDevice()) return "other"
  const stat = Fs.lstatSync(at(folder, dirent.name), { throwIfNoEntry: false })
  if (stat === undefined) return undefined
  return stat.isFile() ? "file" : stat.isDirectory() ? "directory" : stat.isSymbolicLink() ? "symlink" : "other"
}

/** A folder's entries with their kinds (those gone meanwhile left out). */
const entriesOf = (folder: Folder) =>
  Fs.readdirSync(folder.path, { withFileTypes: true, encoding: "buffer" }).flatMap((dirent) => {
    const kind = kindOf(folder, dirent)
    return kind === undefined ? [] : [{ raw: dirent.name, name: nameOf(dirent.name), kind }]
  })

/** A symlink's target as the port carries it (UTF-8), or undefined (not UTF-8, or gone). */
const targetOf = (path: string | Buffer): string | undefined => {
  const raw = unlessGone(() => Fs.readlinkSync(path, { encoding: "buffer" }))
  return raw === undefined ? undefined : nameOf(raw)
}

export interface ScanOptions {
  /** When the scan started, in nanoseconds since the epoch (now by default): files changed since shortly before get no fingerprint. */
  readonly startedAt?: bigint
}

/**
 * Every entry of the workspace but excluded ones (not descended into), depth first, parents before children, siblings
 * by code point (their names' UTF-8 bytes); `[]` when there is no workspace yet. Entries that vanish while scanned are
 * left out. A folder that cannot be read fails the scan.
 */
export const scan = async (location: Location, exclude: Excluded, options: ScanOptions = {}): Promise<Array<WorkspaceEntry>> => {
  const root = openWorkspace(location, false)
  if (root === undefined) return []
  const trustedBefore = (options.startedAt ?? BigInt(Date.now()) * 1_000_000n) - racyWindowNs
  const pause = pacer()
  const entries: Array<WorkspaceEntry> = []
  const walk = async (folder: Folder, prefix: string): Promise<void> => {
    for (const raw of Fs.readdirSync(folder.path, { encoding: "buffer" }).sort(Buffer.compare)) {
      await pause()
      const name = nameOf(raw)
      if (name === undefined) continue
      const path = join(prefix, name)
      if (!WorkspacePath.isRelativePath(path) || exclude(path)) continue
      const stat = unlessGone(() => Fs.lstatSync(at(folder, name), { bigint: true }))
      if (stat === undefined) continue
      if (stat.isFile()) {
        const trusted = stat.mtimeNs < trustedBefore && stat.ctimeNs < trustedBefore
        entries.push({ path, kind: "file", mode: modeOf(stat), size: Number(stat.size), ...(trusted ? { fingerprint: fingerprintOf(stat) } : {}) })
      } else if (stat.isSymbolicLink()) {
        const target = targetOf(at(folder, name))
        if (target !== undefined) entries.push({ path, kind: "symlink", mode: modeOf(stat), size: 0, target })
      } else if (stat.isDirectory()) {
        // Opened without following: a folder swapped for a symlink since the lstat is left out, not listed from outside.
        const child = unlessGone(() => openFolder(folder, name))
        if (child === undefined) continue
        try {
          entries.push({ path, kind: "directory", mode: modeOf(Fs.fstatSync(child.fd)), size: 0 })
          await walk(child, path)
        } finally {
          close(child)
        }
      }
    }
  }
  try {
    await walk(root, "")
  } finally {
    close(root)
  }
  return entries
}

/**
 * Opens the regular file at `relative` for reading and gives its descriptor: every folder on the way and the file
 * itself must be what they seem, no symlink anywhere (that fails, as does a missing file or one that is not regular).
 */
export const openFile = (location: Location, relative: string): number => {
  const root = openWorkspace(location, false)
  if (root === undefined) throw new Error("the workspace does not exist yet")
  let folder = root
  const segments = relative.split("/")
  try {
    for (const segment of segments.slice(0, -1)) {
      let next: Folder
      try {
        next = openFolder(folder, segment)
      } catch (error) {
        throw isGone(error) ? new Error(`${JSON.stringify(relative)}: ${segment} is missing, a symlink or not a folder`) : error
      }
      close(folder)
      folder = next
    }
    let fd: number
    try {
      // O_NONBLOCK: a FIFO put there does not hang the open (it is no regular file, and is refused).
      fd = Fs.openSync(at(folder, segments[segments.length - 1]!), O_RDONLY | O_NOFOLLOW | O_NONBLOCK)
    } catch (error) {
      throw code(error) === "ELOOP" ? new Error(`${JSON.stringify(relative)} is a symlink`) : error
    }
    if (!Fs.fstatSync(fd).isFile()) {
      Fs.closeSync(fd)
      throw new Error(`${JSON.stringify(relative)} is not a regular file`)
    }
    return fd
  } finally {
    close(folder)
  }
}

const chunkBytes = 1024 * 1024

const readAt = (fd: number, buffer: Buffer, position: number) =>
  new Promise<number>((resolve, reject) =>
    Fs.read(fd, buffer, 0, buffer.length, position, (error, bytesRead) => (error === null ? resolve(bytesRead) : reject(error)))
  )

/**
 * An open file's bytes from its start to its end, in chunks of at most 1 MiB sized to what is left of it (a file that
 * grows meanwhile is read as it grows). The caller closes the descriptor.
 */
export const chunksOf = (fd: number): Stream.Stream<Uint8Array, unknown> =>
  Stream.unwrap(Effect.map(
    Effect.try({ try: () => Fs.fstatSync(fd).size, catch: (cause) => cause }),
    (size) =>
      // The offset to read at, or undefined once a read came back short: a regular file's reads do only at its end.
      Stream.unfold<number | undefined, Uint8Array, unknown, never>(0, (offset) =>
        Effect.tryPromise({
          try: async () => {
            if (offset === undefined) return undefined
            // One byte past the expected end, so that the last read comes back short and no extra read is needed.
            const buffer = Buffer.allocUnsafeSlow(Math.min(chunkBytes, Math.max(0, size - offset) + 1))
            const bytesRead = await readAt(fd, buffer, offset)
            if (bytesRead === 0) return undefined
            const next = bytesRead < buffer.length ? undefined : offset + bytesRead
            return [new Uint8Array(buffer.buffer, buffer.byteOffset, bytesRead), next] as const
          },
          catch: (cause) => cause
        }))
  ))

type FileNode = Extract<RestoreEntry, { readonly kind: "file" }>
type SymlinkNode = Extract<RestoreEntry, { readonly kind: "symlink" }>
interface FolderNode {
  readonly kind: "directory"
  mode: number
  readonly children: Map<string, Node>
}
type Node = FolderNode | FileNode | SymlinkNode

/** The tree as folders of nodes, excluded entries left out (the predicate is not asked below an excluded folder). */
const treeOf = (entries: ReadonlyArray<RestoreEntry>, exclude: Excluded): FolderNode => {
  const root: FolderNode = { kind: "directory", mode: 0o755, children: new Map() }
  const isExcluded = excludedOrWithin(exclude)
  for (const entry of entries) {
    if (isExcluded(entry.path)) continue
    const segments = entry.path.split("/")
    let folder = root
    for (const segment of segments.slice(0, -1)) {
      let next = folder.children.get(segment)
      if (next === undefined) folder.children.set(segment, next = { kind: "directory", mode: 0o755, children: new Map() })
      // WorkspacePath.requireTree puts nothing under a file or a symlink.
      folder = next as FolderNode
    }
    const name = segments[segments.length - 1]!
    const existing = folder.children.get(name)
    if (entry.kind !== "directory") folder.children.set(name, entry)
    else if (existing?.kind === "directory") existing.mode = entry.mode
    else folder.children.set(name, { kind: "directory", mode: entry.mode, children: new Map() })
  }
  return root
}

/**
 * Opens a folder Cairn is about to change, giving its owner (Cairn's user) rwx first where it lacks them; `mode` is the
 * folder's mode before. Without read permission even its owner cannot open it: a handle that needs none (O_PATH) lets
 * Cairn grant it.
 */
const openToChange = (parent: Folder, name: string | Buffer): { readonly folder: Folder; readonly mode: number } => {
  let before: number | undefined
  let folder: Folder
  try {
    folder = openFolder(parent, name)
  } catch (error) {
    if (code(error) !== "EACCES" || !viaProc) throw error
    const bare = Fs.openSync(at(parent, name), O_PATH | O_NOFOLLOW | O_DIRECTORY)
    try {
      before = modeOf(Fs.fstatSync(bare))
      Fs.chmodSync(`/proc/self/fd/${bare}`, before | 0o700)
    } finally {
      Fs.closeSync(bare)
    }
    folder = openFolder(parent, name)
  }
  try {
    const mode = before ?? modeOf(Fs.fstatSync(folder.fd))
    if ((mode & 0o700) !== 0o700 && before === undefined) Fs.fchmodSync(folder.fd, mode | 0o700)
    return { folder, mode }
  } catch (error) {
    close(folder)
    throw error
  }
}

/** Removes a file, symlink or special file (never what a symlink points to); one already gone is fine. */
const unlink = (folder: Folder, name: string | Buffer) => FsPromises.unlink(at(folder, name)).catch(orUndefinedIfGone)

const fchmod = (fd: number, mode: number) =>
  new Promise<void>((resolve, reject) => Fs.fchmod(fd, mode, (error) => (error === null ? resolve() : reject(error))))

/** Whether an entry stays although the tree does not hold it: `path` is undefined for a name the port cannot carry. */
type Keeps = (path: string | undefined, kind: Kind, folder: Folder, name: Buffer) => boolean

/** Keeps nothing: a folder the tree wants as a file or symlink goes whole, excluded paths in it included. */
const keepNothing: Keeps = () => false

/**
 * Empties `parent`'s folder `name` and removes it, without ever following a symlink, but keeping what `keeps` says to
 * and the folders holding it (with their modes). Returns whether the folder was kept.
 */
const clear = async (parent: Folder, name: string | Buffer, path: string | undefined, keeps: Keeps, pause: () => Promise<void>): Promise<boolean> => {
  let opened: { readonly folder: Folder; readonly mode: number }
  try {
    opened = openToChange(parent, name)
  } catch (error) {
    // Swapped for something else since it was listed: that is removed instead.
    if (code(error) === "ENOTDIR" || code(error) === "ELOOP") {
      await unlink(parent, name)
      return false
    }
    if (isGone(error)) return false
    throw error
  }
  const { folder, mode } = opened
  let kept = false
  try {
    const files: Array<Buffer> = []
    const folders: Array<{ readonly raw: Buffer; readonly path: string | undefined }> = []
    for (const child of entriesOf(folder)) {
      await pause()
      const childPath = path === undefined || child.name === undefined ? undefined : join(path, child.name)
      if (keeps(childPath, child.kind, folder, child.raw)) kept = true
      else if (child.kind === "directory") folders.push({ raw: child.raw, path: childPath })
      else files.push(child.raw)
    }
    await inParallel(files, (file) => unlink(folder, file))
    // Folders one at a time: each holds a descriptor while it is emptied.
    for (const child of folders) if (await clear(folder, child.raw, child.path, keeps, pause)) kept = true
    if (kept && mode !== modeOf(Fs.fstatSync(folder.fd))) await fchmod(folder.fd, mode)
  } finally {
    close(folder)
  }
  if (!kept) await FsPromises.rmdir(at(parent, name)).catch(orUndefinedIfGone)
  return kept
}

/** A file or symlink of the tree, to be put in place once the folders are. */
interface Placement {
  readonly folder: string
  readonly name: string
  readonly node: FileNode | SymlinkNode
  /** What is there now, if it may stay (a file or symlink; anything else was removed). */
  readonly existing: "file" | "symlink" | undefined
}

/**
 * Makes the workspace exactly the tree (see the port's restoreWorkspace). Three passes: the folders, depth first (what
 * the tree does not hold is removed, entries of the wrong kind too, missing folders made, each folder writable by
 * Cairn meanwhile); then the files and symlinks, several at once, each written beside its place and renamed over it,
 * or kept when its fingerprint is its `unchangedIf`; last the folders' modes, children first, so that a read-only
 * folder is made so once its content is in.
 */
export const restore = async (location: Location, entries: ReadonlyArray<RestoreEntry>, exclude: Excluded): Promise<void> => {
  const tree = treeOf(entries, exclude)
  // Excluded paths stay, and so do names the port cannot carry and symlinks whose targets it cannot: none was listed.
  const keeps: Keeps = (path, kind, folder, name) =>
    path === undefined || !WorkspacePath.isRelativePath(path) || exclude(path) ||
    (kind === "symlink" && unlessGone(() => nameOf(Fs.readlinkSync(at(folder, name), { encoding: "buffer" })) === undefined) === true)
  const pause = pacer()
  const root = openWorkspace(location, true)!
  let rootMode: number | undefined
  try {
    rootMode = modeOf(Fs.fstatSync(root.fd))
    if ((rootMode & 0o700) !== 0o700) await fchmod(root.fd, rootMode | 0o700)
    const placements: Array<Placement> = []
    await arrange(root, "", tree, keeps, placements, pause)
    await place(root, placements, pause)
    await settle(root, tree, pause)
  } finally {
    if (rootMode !== undefined && (rootMode & 0o700) !== 0o700) await fchmod(root.fd, rootMode).catch(() => undefined)
    close(root)
  }
}

/** The first pass, in one folder: removes, replaces and makes entries, then goes into the tree's folders. */
const arrange = async (
  folder: Folder,
  prefix: string,
  node: FolderNode,
  keeps: Keeps,
  placements: Array<Placement>,
  pause: () => Promise<void>
): Promise<void> => {
  const present = new Map<string, Kind>()
  // What the tree does not hold goes (files several at once, folders one by one, emptied first), and so does what
  // has the wrong kind to stay; missing folders are made, writable by Cairn until the third pass.
  const doomed: Array<string | Buffer> = []
  const folders: Array<{ readonly raw: Buffer; readonly path: string | undefined }> = []
  for (const entry of entriesOf(folder)) {
    await pause()
    if (entry.name !== undefined && node.children.has(entry.name)) {
      present.set(entry.name, entry.kind)
      continue
    }
    const path = entry.name === undefined ? undefined : join(prefix, entry.name)
    if (keeps(path, entry.kind, folder, entry.raw)) continue
    if (entry.kind === "directory") folders.push({ raw: entry.raw, path })
    else doomed.push(entry.raw)
  }
  const missing: Array<string> = []
  for (const [name, child] of node.children) {
    const kind = present.get(name)
    if (child.kind === "directory" && kind !== "directory") missing.push(name)
    if (child.kind === "directory" ? kind !== undefined && kind !== "directory" : kind === "other") doomed.push(name)
  }
  await inParallel(doomed, (name) => unlink(folder, name))
  for (const entry of folders) await clear(folder, entry.raw, entry.path, keeps, pause)
  await inParallel(missing, (name) => FsPromises.mkdir(at(folder, name), 0o700))
  for (const [name, child] of node.children) {
    await pause()
    const kind = present.get(name)
    if (child.kind === "directory") {
      const { folder: opened } = openToChange(folder, name)
      try {
        await arrange(opened, join(prefix, name), child, keeps, placements, pause)
      } finally {
        close(opened)
      }
    } else {
      if (kind === "directory") await clear(folder, name, undefined, keepNothing, pause)
      placements.push({ folder: prefix, name, node: child, existing: kind === "file" || kind === "symlink" ? kind : undefined })
    }
  }
}

/** Opens the folder at `relative` (made by the first pass) from the workspace down, following no symlink. */
const openPath = (root: Folder, relative: string): Folder => {
  let folder = root
  try {
    for (const segment of relative.split("/")) {
      const next = openFolder(folder, segment)
      if (folder !== root) close(folder)
      folder = next
    }
    return folder
  } catch (error) {
    if (folder !== root) close(folder)
    throw error
  }
}

/**
 * The second pass: every file and symlink, several at once (so that reading one's content overlaps writing another's),
 * each folder opened once, when its first entry is placed, and closed after its last.
 */
const place = async (root: Folder, placements: ReadonlyArray<Placement>, pause: () => Promise<void>): Promise<void> => {
  const folders = new Map<string, { opened: Folder | undefined; pending: number }>()
  for (const placement of placements) {
    const entry = folders.get(placement.folder) ?? { opened: undefined, pending: 0 }
    entry.pending++
    folders.set(placement.folder, entry)
  }
  const acquire = (relative: string) => {
    if (relative === "") return root
    const entry = folders.get(relative)!
    return entry.opened ??= openPath(root, relative)
  }
  const release = (relative: string) => {
    const entry = folders.get(relative)!
    if (--entry.pending === 0 && entry.opened !== undefined) close(entry.opened)
  }
  try {
    await inParallel(placements, async (placement) => {
      await pause()
      try {
        await placeOne(acquire(placement.folder), placement)
      } finally {
        release(placement.folder)
      }
    })
  } finally {
    for (const entry of folders.values()) if (entry.pending > 0 && entry.opened !== undefined) close(entry.opened)
  }
}

const temporaryName = () => `.cairn-${randomBytes(8).toString("hex")}`

/** Makes an entry under a temporary name beside `name` and renames it over whatever file or symlink is there. */
const replace = async (folder: Folder, name: string, make: (temporary: string | Buffer) => Promise<void>) => {
  const temporary = at(folder, temporaryName())
  try {
    await make(temporary)
    await FsPromises.rename(temporary, at(folder, name))
  } catch (error) {
    await FsPromises.unlink(temporary).catch(() => undefined)
    throw error
  }
}

const placeOne = async (folder: Folder, { name, node, existing }: Placement): Promise<void> => {
  if (node.kind === "symlink") {
    if (existing === "symlink" && targetOf(at(folder, name)) === node.target) return
    await replace(folder, name, (temporary) => FsPromises.symlink(node.target, temporary))
    return
  }
  if (existing === "file" && node.unchangedIf !== undefined && (await keptAsIs(folder, name, node))) return
  await replace(folder, name, async (temporary) => {
    const handle = await FsPromises.open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600)
    try {
      await handle.writeFile(Stream.toAsyncIterable(node.content))
      await handle.chmod(node.mode)
    } finally {
      await handle.close()
    }
  })
}

/**
 * Keeps the file there when it is a regular file whose fingerprint is the tree's `unchangedIf`, setting its mode
 * through a descriptor opened without following a symlink (one swapped in since the lstat is refused).
 */
const keptAsIs = async (folder: Folder, name: string, node: FileNode): Promise<boolean> => {
  const stat = Fs.lstatSync(at(folder, name), { bigint: true, throwIfNoEntry: false })
  if (stat === undefined || !stat.isFile() || fingerprintOf(stat) !== node.unchangedIf) return false
  if (modeOf(stat) === node.mode) return true
  let fd: number
  try {
    fd = Fs.openSync(at(folder, name), O_RDONLY | O_NOFOLLOW | O_NONBLOCK)
  } catch {
    return false
  }
  try {
    if (Fs.fstatSync(fd, { bigint: true }).ino !== stat.ino) return false
    await fchmod(fd, node.mode)
    return true
  } finally {
    Fs.closeSync(fd)
  }
}

/** The third pass: each folder of the tree gets its mode once everything in it is in place, children first. */
const settle = async (folder: Folder, node: FolderNode, pause: () => Promise<void>): Promise<void> => {
  for (const [name, child] of node.children) {
    if (child.kind !== "directory") continue
    await pause()
    const opened = openFolder(folder, name)
    try {
      await settle(opened, child, pause)
      if (modeOf(Fs.fstatSync(opened.fd)) !== child.mode) await fchmod(opened.fd, child.mode)
    } finally {
      close(opened)
    }
  }
}
