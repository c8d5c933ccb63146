/**
 * The content store port: IPFS files and directories addressed by CID, kept apart per network. Public content may be served
 * by the gateway; private content is only ever read on behalf of its owner (the application checks ownership
 * before it calls `cat`). Adapters: HeliaContentStore (embedded @helia/unixfs on a filesystem blockstore, or in
 * memory with `layerMemory` for tests), KuboContentStore (a Kubo node's RPC API).
 */
import { RelativePath } from "@cairn/domain"
import { Context, type Effect, Result, Schema, type Stream } from "effect"

export type Network = "public" | "private"

export interface AddOptions {
  readonly network: Network
  /** 1 by default (base32 `bafy…`/`bafk…`); 0 gives `Qm…` (dag-pb, sha2-256). */
  readonly cidVersion?: 0 | 1
}

export interface Added {
  readonly cid: string
  /** Bytes of content added (the file's size, not the DAG's). */
  readonly size: number
}

/** The CID is not in this network's store. */
export class ContentNotFound extends Schema.TaggedError<ContentNotFound>()("ContentNotFound", {
  cid: Schema.String,
  network: Schema.Literals(["public", "private"])
}) {
  override get message() {
    return `Content ${this.cid} not found on the ${this.network} network`
  }
}

/** The store failed or could not be reached (a Kubo node down, a disk error). */
export class ContentStoreUnavailable extends Schema.TaggedError<ContentStoreUnavailable>()("ContentStoreUnavailable", {
  operation: Schema.String,
  cause: Schema.Defect()
}) {
  /** Clients get 503 Service unavailable; the cause goes to the log (see @cairn/domain DocumentedError). */
  readonly unavailable = true
  override get message() {
    return `Content store ${this.operation} failed`
  }
}

/** One file of a directory to import, at a relative `/`-separated path (`scripts/run.sh`). */
export interface DirectoryFile {
  readonly path: string
  readonly content: Uint8Array
}

/** What is under a directory CID: every file, directory and symlink, at its path relative to the root. */
export interface DirectoryEntry {
  /** Relative, `/`-separated, never empty (the root itself is not listed). */
  readonly path: string
  readonly cid: string
  readonly kind: "file" | "directory" | "symlink"
  /** Bytes of a file's content; 0 for directories and symlinks. */
  readonly size: number
}

/** What a path under a CID names: its own CID, what it is, and a file's size. */
export interface PathTarget {
  readonly cid: string
  readonly kind: "file" | "directory" | "symlink"
  /** Bytes of a file's content; 0 for directories and symlinks. */
  readonly size: number
}

/** One entry of a directory (not recursive), for a listing. */
export interface DirectoryLink {
  /** The entry's name in its directory: one segment, never empty. */
  readonly name: string
  readonly cid: string
  readonly kind: "file" | "directory" | "symlink"
  /** Bytes of a file's content; 0 for directories and symlinks. */
  readonly size: number
}

/** Some bytes of a file: `length` bytes from `offset` (to the file's end when `length` is left out). */
export interface ByteRange {
  readonly offset: number
  readonly length?: number
}

/**
 * The CID is there but nothing is at the path under it: a name its directory does not have, or a name under a file
 * or a symlink (symlinks are never followed).
 */
export class PathNotFound extends Schema.TaggedError<PathNotFound>()("PathNotFound", {
  cid: Schema.String,
  path: Schema.String
}) {
  override get message() {
    return `Nothing at ${this.path} under ${this.cid}`
  }
}

/** The CID names a file (or a symlink), not a directory. */
export class NotADirectory extends Schema.TaggedError<NotADirectory>()("NotADirectory", {
  cid: Schema.String
}) {
  override get message() {
    return `Content ${this.cid} is not a directory`
  }
}

/**
 * A path `addDirectory` refuses: one the domain's `RelativePath` rule refuses (empty, absolute or a drive letter,
 * an empty, `.` or `..` segment, a backslash (the importer reads `\/` as an escaped slash), a control character
 * (NUL included), over 4096 bytes or a segment over 255); given twice; or both a file and a directory (`a` beside
 * `a/b`). Callers check paths first (`directoryPathProblem`), so this is a guard, not a message for clients.
 */
export class InvalidDirectoryPath extends Schema.TaggedError<InvalidDirectoryPath>()("InvalidDirectoryPath", {
  path: Schema.String,
  reason: Schema.String
}) {
  override get message() {
    return `Invalid directory path ${JSON.stringify(this.path)}: ${this.reason}`
  }
}

// Folder uploads have always said "has a . or .. segment" for both; the rule's other words are used as they are.
const reasonOf = (problem: RelativePath.Problem) =>
  problem.reason === "DotSegment" || problem.reason === "DotDotSegment" ? "has a . or .. segment" : problem.detail

/**
 * The first path of `paths` that `addDirectory` would refuse, with why; undefined when every path is fine. Pure, so
 * callers validate with the same rules the adapters enforce.
 */
export const directoryPathProblem = (paths: ReadonlyArray<string>): InvalidDirectoryPath | undefined => {
  const files = new Set<string>()
  const directories = new Set<string>()
  for (const path of paths) {
    const checked = RelativePath.validate(path)
    if (Result.isFailure(checked)) return new InvalidDirectoryPath({ path, reason: reasonOf(checked.failure) })
    if (files.has(path)) return new InvalidDirectoryPath({ path, reason: "is given twice" })
    if (directories.has(path)) return new InvalidDirectoryPath({ path, reason: "is both a file and a directory" })
    files.add(path)
    const segments = path.split("/")
    for (let i = 1; i < segments.length; i++) {
      const directory = segments.slice(0, i).join("/")
      if (files.has(directory)) return new InvalidDirectoryPath({ path: directory, reason: "is both a file and a directory" })
      directories.add(directory)
    }
  }
  return undefined
}

/**
 * A remote store (a Kubo node) did not answer a read in time: a node that is up but stuck, or one that looks for a
 * block it does not hold. Clients get 504 with this message; the gateway logs the operation and the limit. The
 * embedded store never times out: it reads only its own blockstore.
 */
export class ContentTimeout extends Schema.TaggedError<ContentTimeout>()("ContentTimeout", {
  operation: Schema.String,
  cid: Schema.String,
  timeoutMillis: Schema.Number
}) {
  readonly status = 504
  override readonly message = "Content store timed out"
}

export type ContentStoreError = ContentNotFound | ContentStoreUnavailable | ContentTimeout

/** One block: its CID (a string) and its bytes, which the caller has checked hash to it (PinSources does). */
export interface Block {
  readonly cid: string
  readonly bytes: Uint8Array
}

export class ContentStore extends Context.Service<ContentStore, {
  /** Imports bytes as a UnixFS file (Kubo-compatible chunking: the CID matches `ipfs add` with the same version). */
  readonly add: (
    content: Stream.Stream<Uint8Array, unknown>,
    options: AddOptions
  ) => Effect.Effect<Added, ContentStoreUnavailable>
  /**
   * The file's bytes; with a range, only those bytes (a range past the end is cut at the end), reading only the
   * blocks that hold them: the walk down the file's DAG skips every subtree whose bytes (the UnixFS blocksizes) lie
   * outside the range. A directory, or a CID that names no UnixFS file, is ContentNotFound.
   */
  readonly cat: (cid: string, network: Network, range?: ByteRange) => Stream.Stream<Uint8Array, ContentStoreError>
  /**
   * Follows `path` (names, one per directory level) down from `cid` through UnixFS directories, HAMT shards
   * included, reading only the blocks on the way (a shard's buckets are found by the name's hash), and says what is
   * there; `[]` is the CID itself. A name that is not there, or one under a file or a symlink, is PathNotFound
   * (symlinks are never followed); the CID itself missing, or naming no UnixFS node, is ContentNotFound.
   */
  readonly resolve: (
    cid: string,
    path: ReadonlyArray<string>,
    network: Network
  ) => Effect.Effect<PathTarget, ContentStoreError | PathNotFound>
  /**
   * The entries of one directory (a HAMT shard's too), in name order (UTF-8 byte order), each with its kind and a
   * file's size. A file or symlink CID is NotADirectory; a CID this network lacks is ContentNotFound.
   */
  readonly list: (
    cid: string,
    network: Network
  ) => Effect.Effect<ReadonlyArray<DirectoryLink>, ContentStoreError | NotADirectory>
  /**
   * Imports files as one UnixFS directory (intermediate directories implied by the paths), with the same import
   * settings as `add`: the CID matches `ipfs add -r --wrap-with-directory` of the same tree (no files: the empty
   * directory). `size` is the sum of the files' bytes. A path `directoryPathProblem` objects to is refused with
   * InvalidDirectoryPath before anything is stored.
   */
  readonly addDirectory: (
    files: ReadonlyArray<DirectoryFile>,
    options: AddOptions
  ) => Effect.Effect<Added, ContentStoreUnavailable | InvalidDirectoryPath>
  /**
   * Every entry under a directory CID (recursively, depth first, parents before children, siblings in name order;
   * the root itself is not listed). Symlinks are listed, never followed. A file or symlink CID is NotADirectory; a
   * CID this network lacks (or a directory missing a block) is ContentNotFound. Reads only this store, offline.
   * Every read of a remote store (Kubo) is bounded: no answer in time is ContentTimeout.
   */
  readonly walk: (
    cid: string,
    network: Network
  ) => Effect.Effect<ReadonlyArray<DirectoryEntry>, ContentStoreError | NotADirectory>
  readonly has: (cid: string, network: Network) => Effect.Effect<boolean, ContentStoreUnavailable | ContentTimeout>
  /** The root block's bytes, for `application/vnd.ipld.raw` (trustless gateway). */
  readonly block: (cid: string, network: Network) => Effect.Effect<Uint8Array, ContentStoreError>
  /** The whole DAG under the CID as a CARv1 with that root, for `application/vnd.ipld.car`. */
  readonly car: (cid: string, network: Network) => Stream.Stream<Uint8Array, ContentStoreError>
  /**
   * Stores a whole DAG's blocks, already verified against their CIDs (a pin by CID), the root last so that `has(root)`
   * is true only once everything under it is stored; on Kubo the root is pinned.
   */
  readonly putBlocks: (root: string, blocks: ReadonlyArray<Block>, network: Network) => Effect.Effect<void, ContentStoreUnavailable>
}>()("cairn/ContentStore") {}
