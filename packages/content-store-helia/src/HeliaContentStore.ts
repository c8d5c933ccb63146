/**
 * The ContentStore port on an embedded @helia/unixfs, without a helia node: one blockstore per network (files under
 * `<dataDir>/ipfs/public` and `<dataDir>/ipfs/private`, or memory) and no libp2p, so a block that is not stored
 * fails at once instead of being looked for on the network. Files and directories are imported with Kubo's
 * settings (ipfs-unixfs-importer), so a CID here is the CID `ipfs add` (`-r --wrap-with-directory` for a directory)
 * gives for the same content; directories are walked with ipfs-unixfs-exporter, and paths followed with its dag-pb
 * resolver (HAMT shards too: DirectoryPaths). Files are read by a walk of their own that reads only the blocks a
 * range needs (FileBytes).
 */
import {
  ContentNotFound,
  ContentStore,
  ContentStoreUnavailable,
  type DirectoryEntry,
  directoryPathProblem,
  heldBytes,
  type HeldPieces,
  heldPiecesOf,
  type Network,
  NotADirectory,
  PathNotFound,
  stagedLeavesOf
} from "@cairn/content-store"
import type { UnixFS, UnixFSComponents } from "@helia/unixfs"
import { CarWriter } from "@ipld/car"
import * as dagPb from "@ipld/dag-pb"
import { MemoryBlockstore } from "blockstore-core"
import { Effect, Layer, Stream } from "effect"
import { CID } from "multiformats/cid"
import * as raw from "multiformats/codecs/raw"
import * as Digest from "multiformats/hashes/digest"
import { sha256 } from "multiformats/hashes/sha2"
import { createHash } from "node:crypto"
import * as path from "node:path"
import { listDirectory, NoSuchPath, NotADirectoryError, resolvePath } from "./DirectoryPaths.ts"
import { fileBytes } from "./FileBytes.ts"
import { FsBlocks } from "./FsBlocks.ts"
import { importStagedLeaves, takesStagedLeaves } from "./StagedImport.ts"
import { type UnixfsModules, unixfsModules } from "./UnixfsModules.ts"

type Blockstore = UnixFSComponents["blockstore"]

/**
 * `ipfs add --cid-version=<v> --chunker=size-1048576`, raw leaves for v1 only, 1024 links per node. Directories keep
 * the importer's defaults, which are Kubo's: a directory whose links pass 256 KiB (estimated from names and CIDs)
 * becomes a HAMT shard.
 */
const chunkBytes = 1_048_576

const kuboImport = ({ balanced, fixedSize }: UnixfsModules, cidVersion: 0 | 1) => ({
  cidVersion,
  rawLeaves: cidVersion === 1,
  chunker: fixedSize({ chunkSize: chunkBytes }),
  layout: balanced({ maxChildrenPerNode: 1024 })
})

// A CID whose blocks this store lacks, or that names no UnixFS file: either way this network has no such content.
const absent = new Set(["NotFoundError", "NoResolverError", "NotUnixFSError", "NotAFileError"])

const failure = (operation: string, cid: string, network: Network) => (cause: unknown) =>
  cause instanceof Error && absent.has(cause.name)
    ? new ContentNotFound({ cid, network })
    : new ContentStoreUnavailable({ operation, cause })

const parse = (cid: string, network: Network) =>
  Effect.try({ try: () => CID.parse(cid), catch: () => new ContentNotFound({ cid, network }) })

/**
 * A file held in memory that is one raw leaf (CIDv1, 1 byte to one chunk): the importer would make that leaf the
 * file's root (raw leaves, a single leaf reduced to itself), so its CID is the raw CID of the bytes' SHA-256. Hashed
 * piece by piece and written from its pieces (`FsBlocks.putPieces`), without the importer's join into one chunk.
 */
const addOneLeaf = async (held: HeldPieces, store: Blockstore, signal: AbortSignal): Promise<CID> => {
  const hash = createHash("sha256")
  for (const piece of held.pieces) hash.update(piece)
  const cid = CID.createV1(raw.code, Digest.create(sha256.code, hash.digest()))
  if (store instanceof FsBlocks) await store.putPieces(cid, held.pieces)
  else await store.put(cid, heldBytes(held), { signal })
  return cid
}

/** A block's bytes: blockstores hand them out in pieces. */
const getBlock = async (store: Blockstore, cid: CID, signal: AbortSignal): Promise<Uint8Array> => {
  const pieces: Array<Uint8Array> = []
  for await (const piece of store.get(cid, { signal })) pieces.push(piece)
  return pieces.length === 1 ? pieces[0]! : Buffer.concat(pieces)
}

/** Every block of the DAG under `root`, depth first with parents before children, each once: `ipfs dag export`'s order. */
async function* walk(store: Blockstore, root: CID, signal: AbortSignal) {
  const seen = new Set<string>()
  const pending = [root]
  for (let cid = pending.pop(); cid !== undefined; cid = pending.pop()) {
    if (seen.has(cid.toString())) continue
    seen.add(cid.toString())
    const bytes = await getBlock(store, cid, signal)
    yield { cid, bytes }
    if (cid.code === dagPb.code) pending.push(...dagPb.decode(bytes).Links.map((link) => link.Hash).reverse())
  }
}

/**
 * Every entry under the directory `root`, depth first, parents before children, siblings in name order (a HAMT
 * shard hands its links out in hash order; `listDirectory` sorts them).
 */
const walkDirectory = async (store: Blockstore, root: CID, signal: AbortSignal): Promise<ReadonlyArray<DirectoryEntry>> => {
  const found: Array<DirectoryEntry> = []
  const visit = async (directory: CID, prefix: string): Promise<void> => {
    for (const link of await listDirectory(store, directory, signal)) {
      const path = `${prefix}${link.name}`
      found.push({ path, cid: link.cid, kind: link.kind, size: link.size })
      if (link.kind === "directory") await visit(CID.parse(link.cid), `${path}/`)
    }
  }
  await visit(root, "")
  return found
}

export const make = (stores: Readonly<Record<Network, Blockstore>>) =>
  Effect.sync(() => {
    // Made on first use, with the modules (UnixfsModules).
    const made: Partial<Record<Network, UnixFS>> = {}
    const files = async (network: Network) => {
      const { unixfs } = await unixfsModules()
      return (made[network] ??= unixfs({ blockstore: stores[network] }))
    }

    const hasBlock = (root: CID, network: Network) =>
      Effect.tryPromise({
        try: async (signal) => stores[network].has(root, { signal }),
        catch: (cause) => new ContentStoreUnavailable({ operation: "has", cause })
      })

    const car = (cid: string, network: Network) =>
      Stream.unwrap(Effect.gen(function*() {
        const root = yield* parse(cid, network)
        // Fail before the CAR header goes out, so a caller can still answer "not found".
        if (!(yield* hasBlock(root, network))) return yield* new ContentNotFound({ cid, network })
        const { writer, out } = CarWriter.create([root])
        const write = Effect.tryPromise({
          try: async (signal) => {
            // Each put waits until `out` has been read: the walk goes no faster than the consumer.
            for await (const block of walk(stores[network], root, signal)) await writer.put(block)
            await writer.close()
          },
          catch: failure("car", cid, network)
        })
        return Stream.fromAsyncIterable(out, failure("car", cid, network)).pipe(
          Stream.merge(Stream.fromEffectDrain(write))
        )
      }))

    return ContentStore.of({
      add: (content, { network, cidVersion = 1 }) =>
        Effect.suspend(() => {
          const staged = stagedLeavesOf(content)
          if (staged !== undefined && takesStagedLeaves(staged, cidVersion, chunkBytes)) {
            return Effect.tryPromise({
              try: async (signal) => importStagedLeaves(staged, stores[network], kuboImport(await unixfsModules(), 1), signal),
              catch: (cause) => new ContentStoreUnavailable({ operation: "add", cause })
            }).pipe(Effect.map((cid) => ({ cid: cid.toString(), size: staged.size })))
          }
          const held = heldPiecesOf(content)
          if (held !== undefined && cidVersion === 1 && held.size > 0 && held.size <= chunkBytes) {
            return Effect.tryPromise({
              try: (signal) => addOneLeaf(held, stores[network], signal),
              catch: (cause) => new ContentStoreUnavailable({ operation: "add", cause })
            }).pipe(Effect.map((cid) => ({ cid: cid.toString(), size: held.size })))
          }
          let size = 0
          // Counted in the importer's loop rather than with a Stream.tap: no effect run per chunk.
          async function* counted() {
            for await (const chunk of Stream.toAsyncIterable(content)) {
              size += chunk.byteLength
              yield chunk
            }
          }
          return Effect.tryPromise({
            try: async (signal) =>
              (await files(network)).addByteStream(counted(), { ...kuboImport(await unixfsModules(), cidVersion), signal }),
            catch: (cause) => new ContentStoreUnavailable({ operation: "add", cause })
          }).pipe(Effect.map((cid) => ({ cid: cid.toString(), size })))
        }),
      cat: (cid, network, range) =>
        Stream.unwrap(parse(cid, network).pipe(Effect.map((root) => {
          const store = stores[network]
          // Aborted when the stream is: a client that goes away stops the walk and its reads ahead.
          const reading = new AbortController()
          return Stream.fromAsyncIterable(
            fileBytes((block) => getBlock(store, block, reading.signal), root, range),
            failure("cat", cid, network)
          ).pipe(Stream.ensuring(Effect.sync(() => reading.abort())))
        }))),
      resolve: (cid, path, network) =>
        parse(cid, network).pipe(Effect.flatMap((root) =>
          Effect.tryPromise({
            try: (signal) => resolvePath(stores[network], root, path, signal),
            catch: (cause) =>
              cause instanceof NoSuchPath ? new PathNotFound({ cid, path: path.join("/") }) : failure("resolve", cid, network)(cause)
          })
        )),
      list: (cid, network) =>
        parse(cid, network).pipe(Effect.flatMap((root) =>
          Effect.tryPromise({
            try: (signal) => listDirectory(stores[network], root, signal),
            catch: (cause) => cause instanceof NotADirectoryError ? new NotADirectory({ cid }) : failure("list", cid, network)(cause)
          })
        )),
      addDirectory: (directoryFiles, { network, cidVersion = 1 }) => {
        const invalid = directoryPathProblem(directoryFiles.map((file) => file.path))
        if (invalid !== undefined) return Effect.fail(invalid)
        return Effect.tryPromise({
          try: async () => {
            const modules = await unixfsModules()
            const candidates = directoryFiles.map(({ path, content }) => ({ path, content }))
            let root: CID | undefined
            // With wrapWithDirectory the wrapping directory (path "") comes last.
            for await (const entry of modules.importer(candidates, stores[network], { ...kuboImport(modules, cidVersion), wrapWithDirectory: true })) {
              if (entry.path === "") root = entry.cid
            }
            if (root === undefined) throw new Error("the importer yielded no root directory")
            return root
          },
          catch: (cause) => new ContentStoreUnavailable({ operation: "addDirectory", cause })
        }).pipe(Effect.map((root) => ({
          cid: root.toString(),
          size: directoryFiles.reduce((total, file) => total + file.content.byteLength, 0)
        })))
      },
      walk: (cid, network) =>
        parse(cid, network).pipe(Effect.flatMap((root) =>
          Effect.tryPromise({
            try: (signal) => walkDirectory(stores[network], root, signal),
            catch: (cause) => cause instanceof NotADirectoryError ? new NotADirectory({ cid }) : failure("walk", cid, network)(cause)
          })
        )),
      has: (cid, network) =>
        parse(cid, network).pipe(
          Effect.flatMap((root) => hasBlock(root, network)),
          Effect.catchTag("ContentNotFound", () => Effect.succeed(false))
        ),
      block: (cid, network) =>
        parse(cid, network).pipe(Effect.flatMap((root) =>
          Effect.tryPromise({ try: (signal) => getBlock(stores[network], root, signal), catch: failure("block", cid, network) })
        )),
      car,
      putBlocks: (root, blocks, network) =>
        Effect.tryPromise({
          try: async (signal) => {
            const store = stores[network]
            // Many small blocks (a folder's files) cost a write and a rename each: several at once. The root last:
            // `has(root)` says the whole DAG is here.
            const rest = blocks.filter((block) => block.cid !== root)
            let next = 0
            const writer = async () => {
              while (next < rest.length) {
                const block = rest[next++]!
                await store.put(CID.parse(block.cid), block.bytes, { signal })
              }
            }
            await Promise.all(Array.from({ length: Math.min(32, rest.length) }, writer))
            const top = blocks.find((block) => block.cid === root)
            if (top !== undefined) await store.put(CID.parse(root), top.bytes, { signal })
          },
          catch: (cause) => new ContentStoreUnavailable({ operation: "putBlocks", cause })
        })
    })
  })

const openFsBlockstore = (location: string) =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: async () => {
        const store = new FsBlocks(location)
        await store.open()
        return store
      },
      catch: (cause) => new ContentStoreUnavailable({ operation: "open", cause })
    }),
    (store) => Effect.promise(() => store.close())
  )

/** Blocks kept as files under `<dataDir>/ipfs/<network>`, the directories created on first use. */
export const layer = (options: { readonly dataDir: string }) =>
  Layer.effect(ContentStore, Effect.gen(function*() {
    return yield* make({
      public: yield* openFsBlockstore(path.join(options.dataDir, "ipfs", "public")),
      private: yield* openFsBlockstore(path.join(options.dataDir, "ipfs", "private"))
    })
  }))

/** Blocks kept in memory, a fresh pair of stores each time the layer is built: for tests and the simulated runtime. */
export const layerMemory = Layer.effect(
  ContentStore,
  Effect.suspend(() => make({ public: new MemoryBlockstore(), private: new MemoryBlockstore() }))
)
