/**
 * The shapes of the workspace-tree operations on the AgentEngine port, which snapshots are made of: a scan lists
 * every entry of the workspace (files, directories, symlinks, with their permission bits) and a fingerprint per
 * file that changes whenever the file may have; a restore makes the workspace exactly a given tree. Paths are
 * relative and `/`-separated (WorkspacePath's rules). Excluded paths are neither listed nor touched.
 */
import type { Stream } from "effect"

/** Says whether a relative path is left out of scans and restores (and, for a directory, everything under it). */
export type Excluded = (path: string) => boolean

export interface WorkspaceEntry {
  readonly path: string
  readonly kind: "file" | "directory" | "symlink"
  /** Permission bits (`0o7777`). */
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

/** One entry of the tree a restore makes. Parent directories are implied by paths (mode 0o755 unless listed). */
export type RestoreEntry =
  | { readonly path: string; readonly kind: "directory"; readonly mode: number }
  | { readonly path: string; readonly kind: "symlink"; readonly target: string }
  | {
    readonly path: string
    readonly kind: "file"
    readonly mode: number
    /** The bytes to write; read only when the file must be written. */
    readonly content: Stream.Stream<Uint8Array, unknown>
    /** Keep the file as it is (mode set) when its fingerprint now is this one: the caller knows it holds `content`. */
    readonly unchangedIf?: string
  }

export interface RestoreOptions {
  /** Excluded paths already in the workspace are kept as they are, and so are the directories holding them. */
  readonly exclude: Excluded
}
