/**
 * The snapshot store port: whole directory trees (an agent's workspace) kept as UnixFS directory DAGs, with file
 * modes and symlinks, in a block namespace of their own. Files that did not change since an earlier tree are named
 * by the CID they already have and are not read or stored again, so consecutive snapshots share every unchanged
 * block. A tree's root CID is a plain UnixFS directory any IPFS implementation can read (`ipfs ls`, `ipfs get`).
 *
 * Blocks stay until `collectGarbage` is told which roots are still wanted: everything the store holds that no live
 * root reaches goes. Snapshot blocks are apart from the `/v3` files' blocks (their own blockstore embedded; on Kubo,
 * pinned roots of their own), so collecting them never touches a user's files.
 *
 * Adapters: HeliaSnapshotStore (embedded blockstore under `<dataDir>/ipfs/snapshots`, or memory), KuboSnapshotStore
 * (a Kubo node's RPC API: blocks, named pins and `repo/gc`).
 */
import { Context, type Effect, Schema, type Stream } from "effect"
import type { ContentNotFound, ContentStoreUnavailable, InvalidDirectoryPath, NotADirectory } from "./ContentStore.ts"

/** Permission bits (`0o7777`), as `stat` gives them without the file type. */
export type Mode = number

/** Where a file's bytes come from: a CID an earlier tree stored, or its content to import now. */
export type FileSource =
  | { readonly cid: string }
  | { readonly content: Stream.Stream<Uint8Array, unknown> }

/**
 * One entry of a tree to store, at a relative `/`-separated path (the rules of `directoryPathProblem`). Parent
 * directories are implied by paths; list a directory to keep its mode or to keep it when empty.
 */
export type TreeEntry =
  | { readonly path: string; readonly kind: "directory"; readonly mode: Mode }
  | { readonly path: string; readonly kind: "symlink"; readonly target: string }
  | { readonly path: string; readonly kind: "file"; readonly mode: Mode; readonly source: FileSource }

/** A stored tree: its root, and each file's CID (reused or new) so the caller can name them next time. */
export interface StoredTree {
  readonly cid: string
  readonly files: ReadonlyMap<string, string>
  /** Bytes of file content read and imported by this call (files given by CID count nothing). */
  readonly bytesImported: number
}

/** One entry of a stored tree, as `readTree` lists it. */
export interface TreeListing {
  readonly path: string
  readonly kind: "file" | "directory" | "symlink"
  readonly cid: string
  /** Permission bits: the stored mode, or UnixFS's defaults (0o644 files, 0o755 directories) when none was stored. */
  readonly mode: Mode
  /** A file's bytes; 0 otherwise. */
  readonly size: number
  /** A symlink's target, as stored. */
  readonly target?: string
}

/** A file or symlink of a stored tree, as a diff names it. */
export interface TreeDiffEntry {
  readonly path: string
  readonly kind: "file" | "symlink"
  readonly cid: string
  /** A file's bytes; 0 for a symlink. */
  readonly size: number
  readonly mode: Mode
  /** A symlink's target. */
  readonly target?: string
}

/**
 * How the tree `to` differs from the tree `from`, in files and symlinks (directories are implied by their paths):
 * what only `to` has, what only `from` has, and what both have with other content, mode or kind (`before` is
 * `from`'s). A directory on one side and a file or symlink on the other is the directory's entries removed (or
 * added) and the other added (or removed). Each list is in path order.
 */
export interface TreeDiff {
  readonly added: ReadonlyArray<TreeDiffEntry>
  readonly removed: ReadonlyArray<TreeDiffEntry>
  readonly changed: ReadonlyArray<{ readonly before: TreeDiffEntry; readonly after: TreeDiffEntry }>
}

/** A file's content stream failed while the tree was imported (the file vanished or could not be read). */
export class TreeSourceFailed extends Schema.TaggedError<TreeSourceFailed>()("TreeSourceFailed", {
  path: Schema.String,
  cause: Schema.Defect()
}) {
  override get message() {
    return `Could not read ${JSON.stringify(this.path)} while storing a tree`
  }
}

export class SnapshotStore extends Context.Service<SnapshotStore, {
  /**
   * Stores the tree (root = the directory the paths are relative to) and gives its root CID. Files given by CID
   * must be stored already (an earlier `importTree`'s). Modes equal to UnixFS's defaults are not stored, so a plain
   * tree gets the CID `ipfs add -r` gives it with the same import settings as ContentStore.add (CIDv1, raw leaves,
   * 1 MiB chunks; big directories become HAMT shards). Nothing is listed anywhere until the caller records the CID.
   */
  readonly importTree: (
    entries: ReadonlyArray<TreeEntry>
  ) => Effect.Effect<StoredTree, ContentStoreUnavailable | InvalidDirectoryPath | TreeSourceFailed>
  /**
   * Every entry of a stored tree, depth first, parents before children, siblings in name order (the root itself is
   * not listed). A CID that names no directory is NotADirectory; a CID or block the store lacks, ContentNotFound.
   */
  readonly readTree: (
    cid: string
  ) => Effect.Effect<ReadonlyArray<TreeListing>, ContentNotFound | NotADirectory | ContentStoreUnavailable>
  /**
   * How tree `to` differs from tree `from` (TreeDiff), read from the two DAGs together: an entry (file or whole
   * directory) whose CID is the same on both sides is passed over unread, so the cost is that of what changed. A
   * file's content is never read (its size is in its root node). Errors as `readTree`'s, for either tree.
   */
  readonly diffTrees: (
    from: string,
    to: string
  ) => Effect.Effect<TreeDiff, ContentNotFound | NotADirectory | ContentStoreUnavailable>
  /** A stored file's bytes. */
  readonly cat: (cid: string) => Stream.Stream<Uint8Array, ContentNotFound | ContentStoreUnavailable>
  /** The whole DAG under the CID as a CARv1 with that root, to take a snapshot elsewhere. */
  readonly car: (cid: string) => Stream.Stream<Uint8Array, ContentNotFound | ContentStoreUnavailable>
  readonly has: (cid: string) => Effect.Effect<boolean, ContentStoreUnavailable>
  /**
   * Removes every block no root in `live` reaches (on Kubo: pins exactly `live` among its snapshot pins, then runs
   * `repo/gc`). The caller must not import trees meanwhile: their blocks are not reachable from a live root yet.
   */
  readonly collectGarbage: (
    live: ReadonlyArray<string>
  ) => Effect.Effect<{ readonly blocksRemoved: number }, ContentStoreUnavailable>
}>()("cairn/SnapshotStore") {}
