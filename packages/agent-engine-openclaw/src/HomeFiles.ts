/**
 * Every file Cairn reads, writes, makes, renames or removes in an agent's home goes through here. The agent owns its
 * home (its console writes anything there, symlinks included) and Cairn runs with more rights than the agent, so no
 * path under the home is trusted: each folder is opened from the home down without following a symlink
 * (O_DIRECTORY | O_NOFOLLOW), and everything done in a folder goes through that open folder (`/proc/self/fd/<fd>/<name>`:
 * Linux's way to name an entry of an open directory, as openat(2) does; Node has no openat). A symlink, a file or a
 * FIFO where a folder or file should be is refused (HomeTampered), never followed, whenever it was put there. Where
 * there is no /proc, the folder's path stands in (checked segment by segment, but open to a race).
 *
 * The home itself (`<dataDir>/agents/<agentId>`) is Cairn's: the agent cannot replace it (its sandbox sees only the
 * home's content), so it is opened by path. The gateway, inside its sandbox, follows its own symlinks as it likes:
 * only Cairn's accesses, made with Cairn's rights, must not.
 */
import { randomBytes } from "node:crypto"
import * as Fs from "node:fs"
import * as FsPromises from "node:fs/promises"

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_DIRECTORY, O_NONBLOCK } = Fs.constants
const folderFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW
export const viaProc = process.platform === "linux" && Fs.existsSync("/proc/self/fd")

/** A path that resolves outside the workspace: a symlink the agent made, or a defect upstream. */
export class WorkspaceEscape extends Error {
  constructor(path: string) {
    super(`${JSON.stringify(path)} leads outside the agent's workspace`)
  }
}

/**
 * Something in the agent's home that is not what Cairn put there: a symlink (or a file, a FIFO) where a folder or a
 * regular file should be. Cairn refuses to go through it; the adapter reports EngineUnavailable with this as cause.
 */
export class HomeTampered extends WorkspaceEscape {
  readonly relative: string
  constructor(relative: string) {
    super(relative)
    this.relative = relative
    this.message = `${JSON.stringify(relative)} in the agent's home is not a plain folder or file (a symlink?): Cairn does not follow it`
  }
}

/** An open folder and a path naming it for as long as it is open. */
export interface Folder {
  readonly fd: number
  readonly path: string
}

/** An entry of an open folder, by name (a Buffer for a name that is not UTF-8). */
export const at = (folder: Folder, name: string | Buffer): string | Buffer =>
  typeof name === "string" ? `${folder.path}/${name}` : Buffer.concat([Buffer.from(`${folder.path}/`), name])

/** Opens a folder of `parent` without following a symlink there (ENOTDIR or ELOOP then). */
export const openFolder = (parent: Folder, name: string | Buffer): Folder => {
  const fd = Fs.openSync(at(parent, name), folderFlags)
  return { fd, path: viaProc ? `/proc/self/fd/${fd}` : `${parent.path}/${name.toString()}` }
}

export const close = (folder: Folder) => {
  try {
    Fs.closeSync(folder.fd)
  } catch {
    // Closed already.
  }
}

export const code = (error: unknown) => (error as NodeJS.ErrnoException | undefined)?.code

/** ENOTDIR or ELOOP on a no-follow open: something other than a folder (or file) is there. */
const isNotPlain = (error: unknown) => code(error) === "ENOTDIR" || code(error) === "ELOOP"

/** Splits a relative path (`/`-separated, no `..`, no empty segment) into its segments, refusing anything else. */
export const segmentsOf = (relative: string): Array<string> => {
  if (relative === "") return []
  const segments = relative.split("/")
  if (segments.some((segment) => segment === "" || segment === "." || segment === "..")) throw new HomeTampered(relative)
  return segments
}

/** Opens the home (Cairn's own path); undefined when it does not exist. */
export const openHome = (home: string): Folder | undefined => {
  try {
    const fd = Fs.openSync(home, O_RDONLY | O_DIRECTORY)
    return { fd, path: viaProc ? `/proc/self/fd/${fd}` : home }
  } catch (error) {
    if (code(error) === "ENOENT") return undefined
    throw error
  }
}

/**
 * Opens the folder at `relative` under `from`, following no symlink; undefined when it (or a folder on the way) is
 * missing and `create` is false. With `create`, missing folders are made one at a time (mode 0755), each opened
 * without following before the next is made in it. `from` stays open (the caller's). `shown` names the path in errors.
 */
export const openPath = (from: Folder, relative: string, create: boolean, shown = relative): Folder | undefined => {
  let folder = from
  const release = () => {
    if (folder !== from) close(folder)
  }
  try {
    for (const segment of segmentsOf(relative)) {
      let next: Folder
      try {
        next = openFolder(folder, segment)
      } catch (error) {
        if (isNotPlain(error)) throw new HomeTampered(shown)
        if (code(error) !== "ENOENT") throw error
        if (!create) {
          release()
          return undefined
        }
        try {
          Fs.mkdirSync(at(folder, segment), 0o755)
        } catch (error) {
          if (code(error) !== "EEXIST") throw error
        }
        try {
          next = openFolder(folder, segment)
        } catch (error) {
          throw isNotPlain(error) ? new HomeTampered(shown) : error
        }
      }
      release()
      folder = next
    }
    return folder
  } catch (error) {
    release()
    throw error
  }
}

/** Opens the folder at `relative` (`""`: the home) from the home down; see openPath. */
export const openDir = (home: string, relative: string, create: boolean): Folder | undefined => {
  const root = openHome(home)
  if (root === undefined) {
    if (create) throw new Error(`the agent's home ${home} does not exist`)
    return undefined
  }
  if (relative === "") return root
  try {
    return openPath(root, relative, create)
  } finally {
    close(root)
  }
}

/** Runs `use` on the open folder at `relative` (undefined when missing and not `create`d), closing it after. */
export const withDir = async <A>(home: string, relative: string, create: boolean, use: (folder: Folder | undefined) => Promise<A>): Promise<A> => {
  const folder = openDir(home, relative, create)
  try {
    return await use(folder)
  } finally {
    if (folder !== undefined) close(folder)
  }
}

const split = (relative: string) => {
  const slash = relative.lastIndexOf("/")
  return { dir: slash < 0 ? "" : relative.slice(0, slash), name: relative.slice(slash + 1) }
}

/**
 * Opens the regular file `name` of an open folder for reading, following no symlink (O_NONBLOCK: a FIFO does not hang
 * the open). Undefined when missing; HomeTampered when it is a symlink or not a regular file.
 */
export const openFileIn = (folder: Folder, name: string, shown: string): number | undefined => {
  let fd: number
  try {
    fd = Fs.openSync(at(folder, name), O_RDONLY | O_NOFOLLOW | O_NONBLOCK)
  } catch (error) {
    if (code(error) === "ENOENT") return undefined
    if (isNotPlain(error)) throw new HomeTampered(shown)
    throw error
  }
  if (!Fs.fstatSync(fd).isFile()) {
    Fs.closeSync(fd)
    throw new HomeTampered(shown)
  }
  return fd
}

/** The text of the regular file at `relative` under the home, or undefined when it (or a folder on the way) is missing. */
export const readText = (home: string, relative: string): Promise<string | undefined> => {
  const { dir, name } = split(relative)
  return withDir(home, dir, false, async (folder) => {
    if (folder === undefined) return undefined
    const fd = openFileIn(folder, name, relative)
    if (fd === undefined) return undefined
    try {
      return Fs.readFileSync(fd, "utf8")
    } finally {
      Fs.closeSync(fd)
    }
  })
}

/** A name no other writer picks: `.<base>.cairn-<random>`, hidden from OpenClaw's skill discovery. */
export const temporaryName = (base: string) => `.${base}.cairn-${randomBytes(6).toString("hex")}`

/**
 * Creates `name` in an open folder with `content` and `mode`; fails if anything (a symlink included) is there already.
 * The mode is set again on the open file: the umask may have narrowed it.
 */
export const createIn = async (folder: Folder, name: string, content: string | Uint8Array, mode: number) => {
  const handle = await FsPromises.open(at(folder, name), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode)
  try {
    await handle.writeFile(content)
    await handle.chmod(mode)
  } finally {
    await handle.close()
  }
}

/**
 * Puts `content` at `name` in an open folder atomically: a new file under a temporary name beside it, renamed over
 * whatever file or symlink is there (a symlink is replaced, never written through).
 */
export const replaceIn = async (folder: Folder, name: string, content: string | Uint8Array, mode: number) => {
  const temporary = temporaryName(name)
  try {
    await createIn(folder, temporary, content, mode)
    await FsPromises.rename(at(folder, temporary), at(folder, name))
  } catch (error) {
    await FsPromises.unlink(at(folder, temporary)).catch(() => undefined)
    throw error
  }
}

/** Writes `text` at `relative` under the home atomically (see replaceIn), making the folders on the way. */
export const writeText = (home: string, relative: string, text: string, mode = 0o600): Promise<void> => {
  const { dir, name } = split(relative)
  return withDir(home, dir, true, (folder) => replaceIn(folder!, name, text, mode))
}

/** Renames `from` to `to`, both entries of the folder at `dir` (never following a symlink: rename does not). */
export const renameIn = (home: string, dir: string, from: string, to: string): Promise<void> =>
  withDir(home, dir, false, async (folder) => {
    if (folder === undefined) throw Object.assign(new Error(`${dir} is missing`), { code: "ENOENT" })
    await FsPromises.rename(at(folder, from), at(folder, to))
  })

/** Removes the file or symlink at `relative` (never what a symlink points to); a missing one is fine. */
export const removeFile = (home: string, relative: string): Promise<void> => {
  const { dir, name } = split(relative)
  return withDir(home, dir, false, async (folder) => {
    if (folder === undefined) return
    await FsPromises.unlink(at(folder, name)).catch((error: unknown) => {
      if (code(error) !== "ENOENT") throw error
    })
  })
}
