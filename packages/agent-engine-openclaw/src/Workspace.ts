/**
 * An agent's workspace on disk (`<home>/.openclaw/workspace`, reference features §8): skill folders under
 * `skills/<name>/`, where OpenClaw discovers them (features §4), and any other file a template or user puts there.
 * OpenClaw has no API to upload arbitrary files, so they are written directly: each file to a temporary name beside
 * it and renamed over, each skill folder complete beside the old one and then swapped in. Temporary names start
 * with `.`, which OpenClaw's skill discovery skips.
 *
 * Paths come checked by WorkspacePath (relative, `..`-free); this module still resolves every one and refuses any
 * that would leave the workspace, through symlinks too (the agent can create those). Failures are thrown as they
 * come; the adapter turns them into EngineUnavailable.
 */
import { WorkspacePath, type WorkspaceFile, type WorkspaceRead } from "@cairn/agent-engine"
import { randomBytes } from "node:crypto"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"

/** A path that resolves outside the workspace: a symlink the agent made, or a defect upstream. */
export class WorkspaceEscape extends Error {
  constructor(path: string) {
    super(`${JSON.stringify(path)} leads outside the agent's workspace`)
  }
}

const isInside = (root: string, path: string) => path === root || path.startsWith(root + Path.sep)

/** Joins a checked relative path under a root, refusing anything that lands outside it. */
const under = (root: string, relative: string) => {
  if (!WorkspacePath.isRelativePath(relative)) throw new WorkspaceEscape(relative)
  const path = Path.resolve(root, ...relative.split("/"))
  if (!isInside(root, path) || path === root) throw new WorkspaceEscape(relative)
  return path
}

/** A name no other writer picks: `.<base>.cairn-<random>`, hidden from OpenClaw's discovery. */
const temporaryName = (base: string) => `.${base}.cairn-${randomBytes(6).toString("hex")}`

const code = (error: unknown) => (error as NodeJS.ErrnoException | undefined)?.code

const orUndefinedIfMissing = <A>(promise: Promise<A>): Promise<A | undefined> =>
  promise.catch((error: unknown) => {
    if (code(error) === "ENOENT" || code(error) === "ENOTDIR") return undefined
    throw error
  })

/**
 * The workspace's real path, creating the folder (not its parents: the agent's home must exist) when asked to. The
 * workspace itself must be a folder, not a symlink the agent put in its place to send Cairn's writes elsewhere.
 */
const realWorkspace = async (workspace: string, create: boolean): Promise<string | undefined> => {
  if (create) {
    await Fs.mkdir(workspace, { mode: 0o755 }).catch((error: unknown) => {
      if (code(error) !== "EEXIST") throw error
    })
  }
  const stat = await orUndefinedIfMissing(Fs.lstat(workspace))
  if (stat === undefined) return undefined
  if (!stat.isDirectory()) throw new WorkspaceEscape(".")
  return Fs.realpath(workspace)
}

/**
 * The real path of `relative` (a folder) under the real workspace `root`, creating missing folders one at a time so
 * that none is ever created through a symlink leading outside. Undefined when missing and `create` is false.
 */
const folderInside = async (root: string, relative: string, create: boolean): Promise<string | undefined> => {
  let current = root
  for (const segment of relative === "" ? [] : relative.split("/")) {
    const next = under(current, segment)
    let stat = await orUndefinedIfMissing(Fs.lstat(next))
    if (stat === undefined) {
      if (!create) return undefined
      await Fs.mkdir(next, { mode: 0o755 }).catch((error: unknown) => {
        if (code(error) !== "EEXIST") throw error
      })
      stat = await Fs.lstat(next)
    }
    if (stat.isSymbolicLink()) {
      const target = await orUndefinedIfMissing(Fs.realpath(next))
      if (target === undefined) return undefined
      if (!isInside(root, target)) throw new WorkspaceEscape(relative)
      if (!(await Fs.stat(target)).isDirectory()) throw new Error(`${relative} is not a folder`)
      current = target
    } else if (stat.isDirectory()) {
      current = next
    } else {
      throw new Error(`${relative} is not a folder`)
    }
  }
  return current
}

const modeOf = (file: WorkspaceFile) => (WorkspacePath.isExecutable(file) ? 0o755 : 0o644)

/** Creates `path` with the file's bytes and mode; fails if anything (a symlink included) is already there. */
const writeNew = async (path: string, file: WorkspaceFile) => {
  await Fs.writeFile(path, file.content, { flag: "wx", mode: modeOf(file) })
  // The umask may have narrowed the mode.
  await Fs.chmod(path, modeOf(file))
}

const removeQuietly = (path: string) => Fs.rm(path, { recursive: true, force: true }).catch(() => undefined)

/**
 * Writes `<workspace>/skills/<name>/` with exactly `files`: the new folder is written complete under a temporary
 * name, then the old one is renamed away, the new one renamed in, and the old one deleted. A failure before the swap
 * leaves the old folder as it was; one during it puts the old folder back.
 */
export const installSkill = async (workspace: string, name: string, files: ReadonlyArray<WorkspaceFile>) => {
  const root = (await realWorkspace(workspace, true))!
  const skills = (await folderInside(root, "skills", true))!
  const target = under(skills, name)
  const staging = under(skills, temporaryName(name))
  await Fs.mkdir(staging, { mode: 0o755 })
  try {
    for (const file of files) {
      // The staging folder is ours alone and holds no symlinks: plain mkdir is safe inside it.
      const path = under(staging, file.path)
      await Fs.mkdir(Path.dirname(path), { recursive: true, mode: 0o755 })
      await writeNew(path, file)
    }
  } catch (error) {
    await removeQuietly(staging)
    throw error
  }
  const old = under(skills, temporaryName(name))
  let replaced = false
  try {
    await Fs.rename(target, old)
    replaced = true
  } catch (error) {
    if (code(error) !== "ENOENT") {
      await removeQuietly(staging)
      throw error
    }
  }
  try {
    await Fs.rename(staging, target)
  } catch (error) {
    if (replaced) await Fs.rename(old, target).catch(() => undefined)
    await removeQuietly(staging)
    throw error
  }
  if (replaced) await removeQuietly(old)
}

/** Deletes the skill's folder: renamed away first, so the agent never loads a half-deleted skill. */
export const removeSkill = async (workspace: string, name: string) => {
  const root = await realWorkspace(workspace, false)
  const skills = root === undefined ? undefined : await folderInside(root, "skills", false)
  if (skills === undefined) return
  const target = under(skills, name)
  const doomed = under(skills, temporaryName(name))
  try {
    await Fs.rename(target, doomed)
  } catch (error) {
    if (code(error) === "ENOENT") return
    throw error
  }
  await Fs.rm(doomed, { recursive: true, force: true })
}

/**
 * The skill folder's files, recursively, sorted by path; undefined when there is no folder. Symlinks are not
 * followed: each is reported as a file whose content is `symlink:<target>`, so that it never matches an installed
 * file. Something other than a folder where the skill's folder should be (a symlink, a file) holds no files: `[]`.
 */
export const readSkill = async (workspace: string, name: string): Promise<ReadonlyArray<WorkspaceFile> | undefined> => {
  const root = await realWorkspace(workspace, false)
  const skills = root === undefined ? undefined : await folderInside(root, "skills", false)
  if (skills === undefined) return undefined
  const folder = under(skills, name)
  const stat = await orUndefinedIfMissing(Fs.lstat(folder))
  if (stat === undefined) return undefined
  if (!stat.isDirectory()) return []
  const files: Array<WorkspaceFile> = []
  const walk = async (dir: string, prefix: string): Promise<void> => {
    for (const entry of await Fs.readdir(dir, { withFileTypes: true })) {
      const path = Path.join(dir, entry.name)
      const relative = prefix === "" ? entry.name : `${prefix}/${entry.name}`
      if (entry.isDirectory()) await walk(path, relative)
      else if (entry.isSymbolicLink()) files.push({ path: relative, content: new TextEncoder().encode(`symlink:${await Fs.readlink(path)}`) })
      else if (entry.isFile()) files.push({ path: relative, content: new Uint8Array(await Fs.readFile(path)) })
      // Sockets, FIFOs and devices are no skill's files.
    }
  }
  await walk(folder, "")
  return files.sort(WorkspacePath.byPath)
}

/** Writes each file atomically (a temporary file beside it, renamed over), creating folders as needed. */
export const writeFiles = async (workspace: string, files: ReadonlyArray<WorkspaceFile>) => {
  const root = (await realWorkspace(workspace, true))!
  for (const file of files) {
    const slash = file.path.lastIndexOf("/")
    const folder = (await folderInside(root, slash < 0 ? "" : file.path.slice(0, slash), true))!
    const base = file.path.slice(slash + 1)
    const path = under(folder, base)
    const temporary = under(folder, temporaryName(base))
    try {
      await writeNew(temporary, file)
      // A symlink at `path` is replaced, never followed.
      await Fs.rename(temporary, path)
    } catch (error) {
      await Fs.rm(temporary, { force: true }).catch(() => undefined)
      throw error
    }
  }
}

/**
 * The real path of the file at `relative` and an open handle on it (O_NOFOLLOW), or undefined when there is no such
 * file. A symlink is followed only when its target is inside the workspace too; one leading out is WorkspaceEscape.
 */
const openInside = async (workspace: string, relative: string): Promise<Fs.FileHandle | undefined> => {
  const root = await realWorkspace(workspace, false)
  if (root === undefined) return undefined
  const slash = relative.lastIndexOf("/")
  const folder = await folderInside(root, slash < 0 ? "" : relative.slice(0, slash), false)
  if (folder === undefined) return undefined
  const path = under(folder, relative.slice(slash + 1))
  const stat = await orUndefinedIfMissing(Fs.lstat(path))
  if (stat === undefined) return undefined
  let real = path
  if (stat.isSymbolicLink()) {
    const target = await orUndefinedIfMissing(Fs.realpath(path))
    if (target === undefined) return undefined
    if (!isInside(root, target)) throw new WorkspaceEscape(relative)
    real = target
  }
  // O_NOFOLLOW: a symlink swapped in since the checks above is refused, not followed. O_NONBLOCK: a FIFO put there
  // does not hang the open (it is then no regular file, and never read).
  return orUndefinedIfMissing(Fs.open(real, Fs.constants.O_RDONLY | Fs.constants.O_NOFOLLOW | Fs.constants.O_NONBLOCK))
}

/**
 * One file's bytes, or undefined when there is no such file (a folder is none). A symlink is followed only when its
 * target is inside the workspace too.
 */
export const readFile = async (workspace: string, relative: string): Promise<Uint8Array | undefined> => {
  const handle = await openInside(workspace, relative)
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
export const readFileWithin = async (workspace: string, relative: string, maxBytes: number): Promise<WorkspaceRead> => {
  const handle = await openInside(workspace, relative)
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
