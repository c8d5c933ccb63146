/**
 * SnapshotStore.importTree on any block store. Files given by content are imported with HeliaContentStore's
 * settings, a few at a time (ImportedFile); files given by CID are placed as they are (ReusedFile); symlinks and
 * directories are made here (Directories), the directories bottom-up once every child has a CID. A mode equal to
 * UnixFS's default is stored nowhere, so a plain tree gets the CID `ipfs add -r` and ContentStore.addDirectory give
 * it. Every block goes through one BlockWriter, in batches.
 */
import {
  ContentStoreUnavailable,
  directoryPathProblem,
  InvalidDirectoryPath,
  type StoredTree,
  type TreeEntry,
  TreeSourceFailed
} from "@cairn/content-store"
import { Effect, Stream } from "effect"
import { CID } from "multiformats/cid"
import { type BlockSize, BlockWriter, type TreeBlockstore } from "./Blocks.ts"
import { defaultDirectoryMode, type Linked, type PutBlock } from "./DagNodes.ts"
import { directoryNode, symlinkNode } from "./Directories.ts"
import { importContent } from "./ImportedFile.ts"
import { FileNotStored, type KnownFiles, NotAFile, reuseFile } from "./ReusedFile.ts"

/** Permission bits, as UnixFS keeps them. */
const permissions = (mode: number) => mode & 0o7777

/** Size lookups are cheap (a stat, an RPC call); imports read and hash content, so fewer run at once. */
const reuseConcurrency = 32
const importConcurrency = 8

/**
 * The first entry path `importTree` refuses, by `directoryPathProblem`'s rules: files and symlinks are checked
 * together; a listed directory must itself be a valid path, listed once, and neither be nor lie under a file.
 */
export const treePathProblem = (entries: ReadonlyArray<TreeEntry>): InvalidDirectoryPath | undefined => {
  const leaves = entries.filter((entry) => entry.kind !== "directory").map((entry) => entry.path)
  const problem = directoryPathProblem(leaves)
  if (problem !== undefined) return problem
  const leafPaths = new Set(leaves)
  const directories = new Set<string>()
  for (const entry of entries) {
    if (entry.kind !== "directory") continue
    const own = directoryPathProblem([entry.path])
    if (own !== undefined) return own
    if (directories.has(entry.path)) return new InvalidDirectoryPath({ path: entry.path, reason: "is given twice" })
    directories.add(entry.path)
    const segments = entry.path.split("/")
    for (let i = 1; i <= segments.length; i++) {
      const path = segments.slice(0, i).join("/")
      if (leafPaths.has(path)) return new InvalidDirectoryPath({ path, reason: "is both a file and a directory" })
    }
  }
  return undefined
}

const parentOf = (path: string) => path.slice(0, Math.max(path.lastIndexOf("/"), 0))
const nameOf = (path: string) => path.slice(path.lastIndexOf("/") + 1)
const depthOf = (path: string) => path === "" ? 0 : path.split("/").length

/** The directories of the tree being built ("" is the root), each with its mode and its children so far. */
class DirectoryDrafts {
  private readonly drafts = new Map<string, { mode: number; readonly children: Map<string, Linked> }>()

  private draft(path: string) {
    let draft = this.drafts.get(path)
    if (draft === undefined) {
      draft = { mode: defaultDirectoryMode, children: new Map() }
      this.drafts.set(path, draft)
      if (path !== "") this.draft(parentOf(path))
    }
    return draft
  }

  declare(path: string, mode: number) {
    this.draft(path).mode = mode
  }

  place(path: string, node: Linked) {
    this.draft(parentOf(path)).children.set(nameOf(path), node)
  }

  /** Makes every directory's node, deepest first so each child is made before its parent; gives the root's. */
  async build(put: PutBlock): Promise<Linked> {
    this.draft("")
    const paths = [...this.drafts.keys()].sort((a, b) => depthOf(b) - depthOf(a))
    let root: Linked | undefined
    for (const path of paths) {
      const { mode, children } = this.drafts.get(path)!
      const node = await directoryNode(children, mode, put)
      if (path === "") root = node
      else this.place(path, node)
    }
    return root!
  }
}

/** A file's content stream failed: the tree cannot be stored as given. */
class SourceFailed extends Error {
  override readonly name = "SourceFailed"
  constructor(cause: unknown) {
    super("a file's content failed", { cause })
  }
}

/** The content as the importer reads it: counted, stopped by the signal, and a failure told apart from the store's. */
async function* reading(content: AsyncIterable<Uint8Array>, signal: AbortSignal, count: (bytes: number) => void) {
  try {
    for await (const chunk of content) {
      signal.throwIfAborted()
      count(chunk.byteLength)
      yield chunk
    }
  } catch (cause) {
    if (signal.aborted) throw cause
    throw new SourceFailed(cause)
  }
}

const storeFailed = (cause: unknown) =>
  cause instanceof ContentStoreUnavailable ? cause : new ContentStoreUnavailable({ operation: "importTree", cause })

export interface TreeBlocks {
  readonly blockstore: TreeBlockstore
  readonly blockSize: BlockSize
  readonly known: KnownFiles
}

type FileEntry = Extract<TreeEntry, { readonly kind: "file" }>
type ReusedEntry = FileEntry & { readonly source: { readonly cid: string } }
type ImportedEntry = FileEntry & { readonly source: { readonly content: Stream.Stream<Uint8Array, unknown> } }
const isReused = (entry: TreeEntry): entry is ReusedEntry => entry.kind === "file" && "cid" in entry.source
const isImported = (entry: TreeEntry): entry is ImportedEntry => entry.kind === "file" && "content" in entry.source

export const importTree = (
  blocks: TreeBlocks,
  entries: ReadonlyArray<TreeEntry>
): Effect.Effect<StoredTree, ContentStoreUnavailable | InvalidDirectoryPath | TreeSourceFailed> =>
  Effect.gen(function*() {
    const invalid = treePathProblem(entries)
    if (invalid !== undefined) return yield* invalid
    const controller = new AbortController()
    const writer = new BlockWriter(blocks.blockstore, { signal: controller.signal })
    const directories = new DirectoryDrafts()
    const files = new Map<string, string>()
    let bytesImported = 0

    // Remembered for the next tree once this one is stored whole (its blocks written).
    const learned: Array<readonly [Linked, number]> = []
    const placeFile = (path: string, node: Linked, mode: number) =>
      Effect.sync(() => {
        directories.place(path, node)
        files.set(path, node.cid.toString())
        learned.push([node, mode])
      })

    const reuse = ({ path, mode, source }: ReusedEntry) =>
      Effect.try({ try: () => CID.parse(source.cid), catch: (cause) => new TreeSourceFailed({ path, cause }) }).pipe(
        Effect.flatMap((cid) =>
          Effect.tryPromise({
            try: (signal) => reuseFile({ ...blocks, put: writer.put, options: { signal } }, cid, permissions(mode)),
            catch: (cause) =>
              cause instanceof FileNotStored || cause instanceof NotAFile ? new TreeSourceFailed({ path, cause }) : storeFailed(cause)
          })
        ),
        Effect.flatMap((node) => placeFile(path, node, permissions(mode)))
      )

    const importFile = ({ path, mode, source }: ImportedEntry) =>
      Effect.tryPromise({
        try: async (signal) => {
          const content = reading(Stream.toAsyncIterable(source.content), signal, (bytes) => (bytesImported += bytes))
          try {
            return await importContent(content, permissions(mode), writer.put)
          } finally {
            // Ends the content stream (and frees what it holds) if the importer stopped before its end.
            void content.return(undefined).catch(() => undefined)
          }
        },
        catch: (cause) => cause instanceof SourceFailed ? new TreeSourceFailed({ path, cause: cause.cause }) : storeFailed(cause)
      }).pipe(Effect.flatMap((node) => placeFile(path, node, permissions(mode))))

    const build = Effect.gen(function*() {
      for (const entry of entries) if (entry.kind === "directory") directories.declare(entry.path, permissions(entry.mode))
      yield* Effect.forEach(entries.filter(isReused), reuse, { concurrency: reuseConcurrency, discard: true })
      yield* Effect.forEach(entries.filter(isImported), importFile, { concurrency: importConcurrency, discard: true })
      return yield* Effect.tryPromise({
        try: async () => {
          for (const entry of entries) {
            if (entry.kind === "symlink") directories.place(entry.path, await symlinkNode(entry.target, writer.put))
          }
          const root = await directories.build(writer.put)
          await writer.flush()
          return root
        },
        catch: storeFailed
      })
    })
    // Stops any write still queued when the import fails or is interrupted.
    const root = yield* build.pipe(Effect.ensuring(Effect.sync(() => controller.abort())))
    for (const [node, mode] of learned) blocks.known.remember(node, mode)
    return { cid: root.cid.toString(), files, bytesImported }
  })
