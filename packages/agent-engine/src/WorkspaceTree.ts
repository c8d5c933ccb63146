/**
 * The shapes of the workspace-tree operations on the AgentEngine port, which snapshots are made of: a scan lists
 * every entry of the workspace (files, directories, symlinks, with their permission bits) and a fingerprint per
 * file that changes whenever the file may have; a restore makes the workspace exactly a given tree. Paths are
 * relative and `/`-separated (WorkspacePath's rules). Excluded paths are neither listed nor touched, and nor are
 * entries whose path the port cannot carry (a name that is not UTF-8, or against WorkspacePath's rules) and symlinks
 * whose target is not UTF-8. Sockets, FIFOs and devices are not listed; a restore removes them.
 */
import type { Stream } from "effect"

/** Says whether a relative path is left out of scans and restores (and, for a directory, everything under it). */
export type Excluded = (path: string) => boolean

export interface WorkspaceEntry {
  readonly path: string
  readonly kind: "file" | "directory" | "symlink"
  /** Permission bits (`0o7777`); a symlink's are the system's (0o777 on Linux), and a restore does not set them. */
  readonly mode: number
  /** A file's bytes; 0 otherwise. */
  readonly size: number
  /** A symlink's target, as it is written (symlinks are listed, never followed). */
  readonly target?: string
  /**
   * A file's change token: two scans give the same one only if the file was not changed in between (on disk: size,
   * modification and change times in nanoseconds, inode). Absent when it cannot be trusted: the file changed so
   * recently that a later change could keep the same times. Then the caller reads the file.
   */
  readonly fingerprint?: string
}

export interface ScanOptions {
  readonly exclude: Excluded
}

/**
 * One entry of the tree a restore makes. Parent directories are implied by paths (mode 0o755 unless listed, existing
 * ones included).
 */
export type RestoreEntry =
  | { readonly path: string; readonly kind: "directory"; readonly mode: number }
  | { readonly path: string; readonly kind: "symlink"; readonly target: string }
  | {
    readonly path: string
    readonly kind: "file"
    readonly mode: number
    /** The bytes to write; read only when the file must be written. */
    readonly content: Stream.Stream<Uint8Array, unknown>
    /**
     * Keep the file as it is (mode set) when its fingerprint now is this one: the caller knows it holds `content`. On
     * disk, a mode that has to change changes the fingerprint too (the change time moves).
     */
    readonly unchangedIf?: string
  }

export interface RestoreOptions {
  /**
   * Excluded paths already in the workspace are kept as they are, and so are the directories holding them (with their
   * modes), unless the tree puts a file or symlink where such a directory is: the tree wins. Excluded entries of the
   * tree are not written. The predicate is not asked about paths under an excluded directory.
   */
  readonly exclude: Excluded
}

/**
 * `exclude` extended to everything under an excluded folder, asking it once per path and never below an excluded
 * folder (as a scan, which does not descend there, would): for restores, which get paths rather than walk them.
 */
export const excludedOrWithin = (exclude: Excluded): Excluded => {
  const verdicts = new Map<string, boolean>()
  const isExcluded = (path: string): boolean => {
    let verdict = verdicts.get(path)
    if (verdict === undefined) {
      const slash = path.lastIndexOf("/")
      verdict = (slash >= 0 && isExcluded(path.slice(0, slash))) || exclude(path)
      verdicts.set(path, verdict)
    }
    return verdict
  }
  return isExcluded
}
