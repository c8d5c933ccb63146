/**
 * The rules every AgentEngine adapter applies to the paths of workspace files and the names of skill folders before
 * it touches anything. Callers validate what users send; a path that breaks these rules reaching an adapter is a
 * defect, so adapters die on it (`require*`) rather than write or read outside the agent's workspace.
 */
import { RelativePath } from "@cairn/domain"
import { Effect } from "effect"
import type { WorkspaceFile } from "./AgentEngine.ts"
import type { RestoreEntry } from "./WorkspaceTree.ts"

/**
 * A relative, `/`-separated path that stays where it starts, by the domain's one rule (`RelativePath`): no leading
 * `/` or drive letter, no empty, `.` or `..` segment, no backslash (a separator elsewhere), no control character
 * (NUL included), at most 4096 bytes of UTF-8 and 255 per segment.
 */
export const isRelativePath = RelativePath.isRelativePath

/**
 * A skill folder's name: one path segment. It may not start with `.`: OpenClaw does not discover dot-folders, and
 * adapters stage their copies under such names.
 */
export const isSkillName = (name: string): boolean => isRelativePath(name) && !name.includes("/") && !name.startsWith(".")

/** Where a skill's folder is in the workspace. */
export const skillFolder = (name: string) => `skills/${name}`

/**
 * Scripts are made executable: files under a `scripts/` folder and files starting with a shebang. Everything else
 * is plain data (0644).
 */
export const isExecutable = (file: WorkspaceFile): boolean =>
  file.path.split("/").slice(0, -1).includes("scripts") || (file.content[0] === 0x23 && file.content[1] === 0x21)

/** Dies unless `path` is a relative path that stays inside the folder it is relative to. */
export const requireRelativePath = (path: string): Effect.Effect<string> =>
  isRelativePath(path) ? Effect.succeed(path) : Effect.die(new Error(`Not a relative workspace path: ${JSON.stringify(path)}`))

export const requireSkillName = (name: string): Effect.Effect<string> =>
  isSkillName(name) ? Effect.succeed(name) : Effect.die(new Error(`Not a skill folder name: ${JSON.stringify(name)}`))

/**
 * Dies unless every path is relative, none is given twice, and none is both a file and a folder (`a` and `a/b`): a
 * set of files that can be written as given.
 */
export const requireFileSet = (files: ReadonlyArray<WorkspaceFile>): Effect.Effect<ReadonlyArray<WorkspaceFile>> =>
  Effect.suspend(() => {
    const paths = new Set<string>()
    for (const file of files) {
      if (!isRelativePath(file.path)) return Effect.die(new Error(`Not a relative workspace path: ${JSON.stringify(file.path)}`))
      if (paths.has(file.path)) return Effect.die(new Error(`Workspace path given twice: ${JSON.stringify(file.path)}`))
      paths.add(file.path)
    }
    for (const path of paths) {
      const segments = path.split("/")
      for (let i = 1; i < segments.length; i++) {
        const folder = segments.slice(0, i).join("/")
        if (paths.has(folder)) return Effect.die(new Error(`Workspace path is both a file and a folder: ${JSON.stringify(folder)}`))
      }
    }
    return Effect.succeed(files)
  })

/**
 * Dies unless a restore's entries can be made as given: every path relative, none given twice, none under a file or
 * a symlink of the same tree (`a` a file and `a/b`), permission bits within 0o7777, symlink targets non-empty and
 * NUL-free (what a symlink can hold).
 */
export const requireTree = (entries: ReadonlyArray<RestoreEntry>): Effect.Effect<ReadonlyArray<RestoreEntry>> =>
  Effect.suspend(() => {
    const kinds = new Map<string, RestoreEntry["kind"]>()
    for (const entry of entries) {
      if (!isRelativePath(entry.path)) return Effect.die(new Error(`Not a relative workspace path: ${JSON.stringify(entry.path)}`))
      if (kinds.has(entry.path)) return Effect.die(new Error(`Workspace path given twice: ${JSON.stringify(entry.path)}`))
      if (entry.kind === "symlink" ? entry.target === "" || entry.target.includes("\0") : !isMode(entry.mode)) {
        return Effect.die(new Error(`Not a ${entry.kind} a workspace can hold: ${JSON.stringify(entry.path)}`))
      }
      kinds.set(entry.path, entry.kind)
    }
    for (const path of kinds.keys()) {
      for (let slash = path.indexOf("/"); slash >= 0; slash = path.indexOf("/", slash + 1)) {
        const kind = kinds.get(path.slice(0, slash))
        if (kind !== undefined && kind !== "directory") {
          return Effect.die(new Error(`Workspace path is under a ${kind}: ${JSON.stringify(path)}`))
        }
      }
    }
    return Effect.succeed(entries)
  })

const isMode = (mode: number) => Number.isInteger(mode) && mode >= 0 && mode <= 0o7777

/** Files in the order readers get them: by path, comparing UTF-16 code units (the same on every runtime). */
export const byPath = (a: WorkspaceFile, b: WorkspaceFile) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)
