/**
 * An agent's workspace on disk (`<home>/.openclaw/workspace`, reference features §8): skill folders under
 * `skills/<name>/`, where OpenClaw discovers them (features §4), and any other file a template or user puts there.
 * OpenClaw has no API to upload arbitrary files, so they are written directly: each file to a temporary name beside
 * it and renamed over, each skill folder complete beside the old one and then swapped in. Temporary names start
 * with `.`, which OpenClaw's skill discovery skips.
 *
 * The agent can put symlinks anywhere in its home, its workspace and `.openclaw` included, so every access goes
 * through HomeFiles: the workspace is opened from the home down without following a symlink (one in its place, or in
 * `.openclaw`'s, is refused: HomeTampered), and everything below is done through open folders. Inside the workspace,
 * a symlink to a folder or file that is itself inside is followed by resolving it and opening its target again from
 * the workspace down, without following anything; one leading out is WorkspaceEscape. Paths come checked by
 * WorkspacePath (relative, `..`-free). Failures are thrown as they come; the adapter turns them into EngineUnavailable.
 */
import { WorkspacePath, type WorkspaceFile, type WorkspaceRead } from "@cairn/agent-engine"
import * as FsSync from "node:fs"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import * as HomeFiles from "./HomeFiles.ts"
import { at, close, code, createIn, type Folder, openFolder, openPath, replaceIn, temporaryName, WorkspaceEscape } from "./HomeFiles.ts"

export { HomeTampered, WorkspaceEscape } from "./HomeFiles.ts"

/** Where a workspace is: the agent's home (Cairn's, trusted as a path) and the workspace's path under it. */
export interface Location {
  readonly home: string
  readonly workspace: string
}

const isInside = (root: string, path: string) => path === root || path.startsWith(root + Path.sep)

/** The workspace opened from the home down, and its real path (to tell where a symlink inside it leads). */
interface Root {
  readonly folder: Folder
  readonly real: string
}

/** Runs `use` on the open workspace (undefined when missing and not `create`d), closing it after. */
const withRoot = async <A>(location: Location, create: boolean, use: (root: Root | undefined) => Promise<A>): Promise<A> => {
  const relative = Path.relative(location.home, location.workspace)
  if (relative === "" || Path.isAbsolute(relative) || relative.split(Path.sep).includes("..")) throw new WorkspaceEscape(location.workspace)
  const folder = HomeFiles.openDir(location.home, relative.split(Path.sep).join("/"), create)
  if (folder === undefined) return use(undefined)
  try {
    return await use({ folder, real: FsSync.realpathSync(folder.path) })
  } finally {
    close(folder)
  }
}

/** Where a symlink at `name` of `folder` leads, relative to the workspace: undefined when dangling, WorkspaceEscape when out. */
const insideTarget = (root: Root, folder: Folder, name: string, shown: string): string | undefined => {
  let target: string
  try {
    target = FsSync.realpathSync(at(folder, name) as string)
  } catch (error) {
    if (code(error) === "ENOENT" || code(error) === "ENOTDIR" || code(error) === "ELOOP") return undefined
    throw error
  }
  if (!isInside(root.real, target)) throw new WorkspaceEscape(shown)
  return Path.relative(root.real, target).split(Path.sep).join("/")
}

/**
 * The folder at `relative` under the workspace, opened without following anything, missing folders made one at a
 * time when `create` is set. A symlink on the way is followed only to a folder inside the workspace (opened again
 * from the workspace down). Undefined when missing and `create` is false. The caller closes it (unless it is the root).
 */
const folderInside = (root: Root, relative: string, create: boolean): Folder | undefined => {
  let current = root.folder
  const release = () => {
    if (current !== root.folder) close(current)
  }
  try {
    for (const segment of HomeFiles.segmentsOf(relative)) {
      let next: Folder | undefined
      try {
        next = openFolder(current, segment)
      } catch (error) {
        if (code(error) === "ENOENT") {
          if (!create) {
            release()
            return undefined
          }
          try {
            FsSync.mkdirSync(at(current, segment), 0o755)
          } catch (error) {
            if (code(error) !== "EEXIST") throw error
          }
          next = openFolder(current, segment)
        } else if (code(error) === "ELOOP" || code(error) === "ENOTDIR") {
          const stat = FsSync.lstatSync(at(current, segment))
          if (!stat.isSymbolicLink()) throw new Error(`${relative} is not a folder`)
          const target = insideTarget(root, current, segment, relative)
          if (target === undefined) {
            release()
            return undefined
          }
          next = target === "" ? root.folder : openPath(root.folder, target, false, relative)
          if (next === undefined) {
            release()
            return undefined
          }
        } else {
          throw error
        }
      }
      release()
      current = next
    }
    return current
  } catch (error) {
    release()
    throw error
  }
}

/** Runs `use` on the folder at `relative` under the workspace (see folderInside), closing it after. */
const withFolder = async <A>(root: Root, relative: string, create: boolean, use: (folder: Folder | undefined) => Promise<A>): Promise<A> => {
  const folder = folderInside(root, relative, create)
  try {
    return await use(folder)
  } finally {
    if (folder !== undefined && folder !== root.folder) close(folder)
  }
}

const split = (relative: string) => {
  const slash = relative.lastIndexOf("/")
  return { dir: slash < 0 ? "" : relative.slice(0, slash), name: relative.slice(slash + 1) }
}

/** Linux's PATH_MAX, counting the terminating NUL. */
const pathMax = 4096

/**
 * Refuses a file whose whole path (workspace included) is longer than the system takes: Cairn writes through open
 * folders and could make it, but OpenClaw, which opens files by path, could not read it.
 */
const requireReachable = (location: Location, relative: string) => {
  const path = Path.join(location.workspace, relative)
  if (Buffer.byteLength(path) >= pathMax) throw Object.assign(new Error(`${JSON.stringify(relative)}: the path is longer than the system takes`), { code: "ENAMETOOLONG" })
}

const modeOf = (file: WorkspaceFile) => (WorkspacePath.isExecutable(file) ? 0o755 : 0o644)

/** A name that is one plain segment (a skill's), refused otherwise. */
const plainName = (name: string) => {
  if (HomeFiles.segmentsOf(name).length !== 1) throw new WorkspaceEscape(name)
  return name
}

const removeQuietly = (folder: Folder, name: string) => Fs.rm(at(folder, name) as string, { recursive: true, force: true }).catch(() => undefined)

/**
 * Writes `<workspace>/skills/<name>/` with exactly `files`: the new folder is written complete under a temporary
 * name, then the old one is renamed away, the new one renamed in, and the old one deleted. A failure before the swap
 * leaves the old folder as it was; one during it puts the old folder back.
 */
export const installSkill = (location: Location, name: string, files: ReadonlyArray<WorkspaceFile>) =>
  withRoot(location, true, (root) => {
    for (const file of files) requireReachable(location, `skills/${name}/${file.path}`)
    return (
    withFolder(root!, "skills", true, async (folder) => {
      const skills = folder!
      const target = plainName(name)
      const staging = temporaryName(name)
      await Fs.mkdir(at(skills, staging) as string, { mode: 0o755 })
      try {
        const opened = openFolder(skills, staging)
        try {
          for (const file of files) {
            const { dir, name: base } = split(file.path)
            const parent = dir === "" ? opened : openPath(opened, dir, true)!
            try {
              await createIn(parent, base, file.content, modeOf(file))
            } finally {
              if (parent !== opened) close(parent)
            }
          }
        } finally {
          close(opened)
        }
      } catch (error) {
        await removeQuietly(skills, staging)
        throw error
      }
      const old = temporaryName(name)
      let replaced = false
      try {
        await Fs.rename(at(skills, target) as string, at(skills, old) as string)
        replaced = true
      } catch (error) {
        if (code(error) !== "ENOENT") {
          await removeQuietly(skills, staging)
          throw error
        }
      }
      try {
        await Fs.rename(at(skills, staging) as string, at(skills, target) as string)
      } catch (error) {
        if (replaced) await Fs.rename(at(skills, old) as string, at(skills, target) as string).catch(() => undefined)
        await removeQuietly(skills, staging)
        throw error
      }
      if (replaced) await removeQuietly(skills, old)
    }))
  })

/** Deletes the skill's folder: renamed away first, so the agent never loads a half-deleted skill. */
export const removeSkill = (location: Location, name: string) =>
  withRoot(location, false, async (root) => {
    if (root === undefined) return
    await withFolder(root, "skills", false, async (skills) => {
      if (skills === undefined) return
      const doomed = temporaryName(name)
      try {
        await Fs.rename(at(skills, plainName(name)) as string, at(skills, doomed) as string)
      } catch (error) {
        if (code(error) === "ENOENT") return
        throw error
      }
      await Fs.rm(at(skills, doomed) as string, { recursive: true, force: true })
    })
  })

/**
 * The skill folder's files, recursively, sorted by path; undefined when there is no folder. Symlinks are not
 * followed: each is reported as a file whose content is `symlink:<target>`, so that it never matches an installed
 * file. Something other than a folder where the skill's folder should be (a symlink, a file) holds no files: `[]`.
 */
export const readSkill = (location: Location, name: string): Promise<ReadonlyArray<WorkspaceFile> | undefined> =>
  withRoot(location, false, async (root) => {
    if (root === undefined) return undefined
    return withFolder(root, "skills", false, async (skills) => {
      if (skills === undefined) return undefined
      const stat = FsSync.lstatSync(at(skills, plainName(name)), { throwIfNoEntry: false })
      if (stat === undefined) return undefined
      if (!stat.isDirectory()) return []
      const files: Array<WorkspaceFile> = []
      const walk = async (folder: Folder, prefix: string): Promise<void> => {
        for (const entry of FsSync.readdirSync(folder.path, { withFileTypes: true })) {
          const relative = prefix === "" ? entry.name : `${prefix}/${entry.name}`
          if (entry.isDirectory()) {
            let child: Folder
            try {
              child = openFolder(folder, entry.name)
            } catch {
              continue // swapped for something else meanwhile
            }
            try {
              await walk(child, relative)
            } finally {
              close(child)
            }
          } else if (entry.isSymbolicLink()) {
            files.push({ path: relative, content: new TextEncoder().encode(`symlink:${FsSync.readlinkSync(at(folder, entry.name))}`) })
          } else if (entry.isFile()) {
            const fd = HomeFiles.openFileIn(folder, entry.name, relative)
            if (fd === undefined) continue
            try {
              files.push({ path: relative, content: new Uint8Array(FsSync.readFileSync(fd)) })
            } finally {
              FsSync.closeSync(fd)
            }
          }
          // Sockets, FIFOs and devices are no skill's files.
        }
      }
      let folder: Folder
      try {
        folder = openFolder(skills, name)
      } catch {
        return []
      }
      try {
        await walk(folder, "")
      } finally {
        close(folder)
      }
      return files.sort(WorkspacePath.byPath)
    })
  })

/** Writes each file atomically (a temporary file beside it, renamed over), creating folders as needed. */
export const writeFiles = (location: Location, files: ReadonlyArray<WorkspaceFile>) =>
  withRoot(location, true, async (root) => {
    for (const file of files) requireReachable(location, file.path)
    for (const file of files) {
      const { dir, name } = split(file.path)
      // A symlink at the file's place is replaced, never followed.
      await withFolder(root!, dir, true, (folder) => replaceIn(folder!, plainName(name), file.content, modeOf(file)))
    }
  })

/**
 * An open handle on the file at `relative` (O_NOFOLLOW), or undefined when there is no such file. A symlink is
 * followed only when its target is inside the workspace too (opened again from the workspace down); one leading out
 * is WorkspaceEscape.
 */
const openInside = (location: Location, relative: string): Promise<Fs.FileHandle | undefined> =>
  withRoot(location, false, async (root) => {
    if (root === undefined) return undefined
    // O_NONBLOCK: a FIFO put there does not hang the open (it is then no regular file, and never read).
    const flags = FsSync.constants.O_RDONLY | FsSync.constants.O_NOFOLLOW | FsSync.constants.O_NONBLOCK
    const open = (folder: Folder, name: string) =>
      Fs.open(at(folder, name) as string, flags).catch((error: unknown) => {
        if (code(error) === "ENOENT") return undefined
        throw error
      })
    const { dir, name } = split(relative)
    return withFolder(root, dir, false, async (folder) => {
      if (folder === undefined) return undefined
      try {
        return await open(folder, plainName(name))
      } catch (error) {
        if (code(error) !== "ELOOP") throw error
      }
      // A symlink: followed when it stays inside, its target opened from the workspace down.
      const target = insideTarget(root, folder, name, relative)
      if (target === undefined || target === "") return undefined
      const real = split(target)
      return withFolder(root, real.dir, false, async (targetFolder) => targetFolder === undefined ? undefined : open(targetFolder, real.name))
    })
  })

/**
 * One file's bytes, or undefined when there is no such file (a folder is none). A symlink is followed only when its
 * target is inside the workspace too.
 */
export const readFile = async (location: Location, relative: string): Promise<Uint8Array | undefined> => {
  const handle = await openInside(location, relative)
  if (handle === undefined) return undefined
  try {
    if (!(await handle.stat()).isFile()) return undefined
    return new Uint8Array(await handle.readFile())
  } finally {
    await handle.close()
  }
}

/**
 * One file's bytes if it has at most `maxBytes`; a bigger one is not read (TooLarge with its size). Missing when
 * there is no regular file there (a folder, a FIFO, a device). The size is the open file's own, so a file swapped
 * in meanwhile is measured, not its predecessor; one that grows while read is cut off and reported TooLarge.
 */
export const readFileWithin = async (location: Location, relative: string, maxBytes: number): Promise<WorkspaceRead> => {
  const handle = await openInside(location, relative)
  if (handle === undefined) return { _tag: "Missing" }
  try {
    const stat = await handle.stat()
    if (!stat.isFile()) return { _tag: "Missing" }
    if (stat.size > maxBytes) return { _tag: "TooLarge", size: stat.size }
    // The stat's size first, then on until the end: a file that grew since its stat is read as it is now, and cut
    // off one byte past the cap.
    const chunks: Array<Uint8Array> = []
    let total = 0
    let wanted = Math.min(stat.size, maxBytes) + 1
    while (total <= maxBytes) {
      const chunk = new Uint8Array(wanted)
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, total)
      if (bytesRead === 0) break
      chunks.push(bytesRead === chunk.length ? chunk : chunk.subarray(0, bytesRead))
      total += bytesRead
      wanted = Math.min(64 * 1024, maxBytes + 1 - total)
      if (wanted <= 0) break
    }
    if (total > maxBytes) return { _tag: "TooLarge", size: Math.max(total, (await handle.stat()).size) }
    const content = new Uint8Array(total)
    let offset = 0
    for (const chunk of chunks) {
      content.set(chunk, offset)
      offset += chunk.length
    }
    return { _tag: "Found", content }
  } finally {
    await handle.close()
  }
}
