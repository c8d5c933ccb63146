/**
 * The ContentStore port on an embedded @helia/unixfs, without a helia node: one blockstore per network (files under
 * `<dataDir>/ipfs/public` and `<dataDir>/ipfs/private`, or memory) and no libp2p, so a block that is not stored
 * fails at once instead of being looked for on the network. Files and directories are imported with Kubo's
 * settings (ipfs-unixfs-importer), so a CID here is the CID `ipfs add` (`-r --wrap-with-directory` for a directory)
 * gives for the same content; directories are walked with ipfs-unixfs-exporter. An upload whose settings are not known
 * yet is staged: imported as it streams (CIDv1 settings) into a staging blockstore of its own, then its blocks are
 * moved into the network's store (a rename each on disk), or re-imported from the staged leaves for CIDv0.
 */
import {
  ContentNotFound,
  ContentStore,
  ContentStoreUnavailable,
  type DirectoryEntry,
  directoryPathProblem,
  type Network,
  NotADirectory,
  type Staged
} from "@cairn/content-store"
import { type UnixFSComponents, unixfs } from "@helia/unixfs"
import { CarWriter } from "@ipld/car"
import * as dagPb from "@ipld/dag-pb"
import { MemoryBlockstore } from "blockstore-core"
import { FsBlockstore } from "blockstore-fs"
import { NextToLast } from "blockstore-fs/sharding"
import { Effect, Layer, type Scope, Stream } from "effect"
import { exporter } from "ipfs-unixfs-exporter"
import { importByteStream, importer } from "ipfs-unixfs-importer"
import { fixedSize } from "ipfs-unixfs-importer/chunker"
import { balanced } from "ipfs-unixfs-importer/layout"
import { CID } from "multiformats/cid"
import * as fs from "node:fs/promises"
import * as path from "node:path"

type Blockstore = UnixFSComponents["blockstore"]

/**
 * `ipfs add --cid-version=<v> --chunker=size-1048576`, raw leaves for v1 only, 1024 links per node. Directories keep
 * the importer's defaults, which are Kubo's: a directory whose links pass 256 KiB (estimated from names and CIDs)
 * becomes a HAMT shard.
 */
const kuboImport = (cidVersion: 0 | 1) => ({
  cidVersion,
  rawLeaves: cidVersion === 1,
  chunker: fixedSize({ chunkSize: 1_048_576 }),
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

/** The walk met a root that is no directory. */
class RootIsNotADirectory extends Error {
  override readonly name = "RootIsNotADirectory"
}

/** Names in UTF-8 byte order (which is code point order), the order of a flat directory's links and of `ipfs ls`. */
const byName = (a: { readonly name: string }, b: { readonly name: string }) => {
  const x = Array.from(a.name, (c) => c.codePointAt(0)!)
  const y = Array.from(b.name, (c) => c.codePointAt(0)!)
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i]! - y[i]!
  return x.length - y.length
}

/**
 * Every entry under the directory `root`, depth first, parents before children, siblings in name order (a HAMT
 * shard hands its links out in hash order).
 */
const walkDirectory = async (store: Blockstore, root: CID, signal: AbortSignal): Promise<ReadonlyArray<DirectoryEntry>> => {
  const options = { signal, offline: true }
  const top = await exporter(root, store, options)
  if (top.type !== "directory") throw new RootIsNotADirectory()
  const found: Array<DirectoryEntry> = []
  const visit = async (directory: typeof top, prefix: string): Promise<void> => {
    const links = []
    for await (const link of directory.entries(options)) links.push(link)
    for (const link of links.sort(byName)) {
      const path = `${prefix}${link.name}`
      const entry = await exporter(link.cid, store, options)
      const cid = link.cid.toString()
      if (entry.type === "directory") {
        found.push({ path, cid, kind: "directory", size: 0 })
        await visit(entry, `${path}/`)
      } else if (entry.type === "file" && entry.unixfs.type === "symlink") {
        found.push({ path, cid, kind: "symlink", size: 0 })
      } else {
        found.push({ path, cid, kind: "file", size: Number(entry.size) })
      }
    }
  }
  await visit(top, "")
  return found
}

/** Where one staged upload's blocks wait: a blockstore of its own, and how its blocks reach a network's store. */
export interface StagingArea {
  readonly blockstore: Blockstore
  /** Moves these blocks (each once) into the network's store; they are gone from the staging area after. */
  readonly moveTo: (network: Network, cids: ReadonlyArray<CID>) => Promise<void>
}

/** Staging in memory: blocks are copied over. For the memory stores. */
const memoryStaging = (stores: Readonly<Record<Network, Blockstore>>): Effect.Effect<StagingArea> =>
  Effect.sync(() => {
    const blockstore = new MemoryBlockstore()
    return {
      blockstore,
      moveTo: async (network, cids) => {
        for (const cid of cids) await stores[network].put(cid, await getBlock(blockstore, cid, AbortSignal.timeout(60_000)))
      }
    }
  })

/** A failure of the content being staged, carried through the importer so it comes out as it went in. */
class ContentFailed<E> {
  readonly error: E
  constructor(error: E) {
    this.error = error
  }
}

export const make = (
  stores: Readonly<Record<Network, Blockstore>>,
  openStaging: Effect.Effect<StagingArea, ContentStoreUnavailable, Scope.Scope> = memoryStaging(stores)
) =>
  Effect.sync(() => {
    const files = { public: unixfs({ blockstore: stores.public }), private: unixfs({ blockstore: stores.private }) }

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

    const unavailable = (operation: string) => (cause: unknown) => new ContentStoreUnavailable({ operation, cause })

    const stage = <E>(content: Stream.Stream<Uint8Array, E>) =>
      Effect.gen(function*() {
        const area = yield* openStaging
        // The importer only puts: recording its puts is how the blocks to move are known.
        const written = new Map<string, CID>()
        const recording = {
          put: (cid: CID, bytes: Uint8Array, options?: { signal?: AbortSignal }) => {
            written.set(cid.toString(), cid)
            return area.blockstore.put(cid, bytes, options)
          }
        }
        let size = 0
        async function* counted() {
          for await (const chunk of Stream.toAsyncIterable(Stream.mapError(content, (error) => new ContentFailed(error)))) {
            size += chunk.byteLength
            yield chunk
          }
        }
        const root = yield* Effect.tryPromise({
          try: async () => (await importByteStream(counted(), recording, kuboImport(1))).cid,
          catch: (cause) => cause instanceof ContentFailed ? cause.error as E : unavailable("stage")(cause)
        })
        const staged = async function*(signal: AbortSignal) {
          const entry = await exporter(root, area.blockstore, { signal, offline: true })
          if (entry.type !== "file" && entry.type !== "raw") throw new Error("a staged file's root is no file")
          yield* entry.content({ signal, offline: true })
        }
        let committed = false
        const result: Staged = {
          size,
          content: Stream.fromAsyncIterable({ [Symbol.asyncIterator]: () => staged(new AbortController().signal) }, unavailable("stage")),
          commit: ({ network, cidVersion = 1 }) =>
            Effect.tryPromise({
              try: async (signal) => {
                if (committed) throw new Error("a staged file is committed once")
                committed = true
                if (cidVersion === 1) {
                  await area.moveTo(network, [...written.values()])
                  return root
                }
                // Other settings give other blocks: import again from the staged leaves (the file's 1 MiB pieces).
                return (await importByteStream(staged(signal), stores[network], kuboImport(cidVersion))).cid
              },
              catch: unavailable("add")
            }).pipe(Effect.map((cid) => ({ cid: cid.toString(), size })))
        }
        return result
      })

    return ContentStore.of({
      stage,
      add: (content, { network, cidVersion = 1 }) =>
        Effect.suspend(() => {
          let size = 0
          // Counted in the importer's loop rather than with a Stream.tap: no effect run per chunk.
          async function* counted() {
            for await (const chunk of Stream.toAsyncIterable(content)) {
              size += chunk.byteLength
              yield chunk
            }
          }
          return Effect.tryPromise({
            try: (signal) => files[network].addByteStream(counted(), { ...kuboImport(cidVersion), signal }),
            catch: (cause) => new ContentStoreUnavailable({ operation: "add", cause })
          }).pipe(Effect.map((cid) => ({ cid: cid.toString(), size })))
        }),
      cat: (cid, network) =>
        Stream.unwrap(parse(cid, network).pipe(Effect.map((root) =>
          // offline: a missing block is an error at once, never a search.
          Stream.fromAsyncIterable(files[network].cat(root, { offline: true }), failure("cat", cid, network))
        ))),
      addDirectory: (directoryFiles, { network, cidVersion = 1 }) => {
        const invalid = directoryPathProblem(directoryFiles.map((file) => file.path))
        if (invalid !== undefined) return Effect.fail(invalid)
        return Effect.tryPromise({
          try: async () => {
            const candidates = directoryFiles.map(({ path, content }) => ({ path, content }))
            let root: CID | undefined
            // With wrapWithDirectory the wrapping directory (path "") comes last.
            for await (const entry of importer(candidates, stores[network], { ...kuboImport(cidVersion), wrapWithDirectory: true })) {
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
            catch: (cause) => cause instanceof RootIsNotADirectory ? new NotADirectory({ cid }) : failure("walk", cid, network)(cause)
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
      car
    })
  })

const openFsBlockstore = (location: string) =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: async () => {
        const store = new FsBlockstore(location)
        await store.open()
        return store
      },
      catch: (cause) => new ContentStoreUnavailable({ operation: "open", cause })
    }),
    (store) => Effect.promise(() => store.close())
  )

/**
 * Staging on disk: one blockstore per upload under `root` (beside the networks' stores, so on the same filesystem)
 * whose block files are renamed into a network's store, removed with everything left in it when the scope closes.
 */
const fsStaging = (root: string, locations: Readonly<Record<Network, string>>) => {
  const sharding = new NextToLast()
  return Effect.acquireRelease(
    Effect.tryPromise({
      try: async () => {
        const location = path.join(root, crypto.randomUUID())
        const blockstore = new FsBlockstore(location)
        await blockstore.open()
        return { location, blockstore }
      },
      catch: (cause) => new ContentStoreUnavailable({ operation: "stage", cause })
    }),
    ({ location }) => Effect.promise(() => fs.rm(location, { recursive: true, force: true }))
  ).pipe(Effect.map(({ location, blockstore }): StagingArea => ({
    blockstore,
    moveTo: async (network, cids) => {
      const made = new Set<string>()
      for (const cid of cids) {
        const { dir, file } = sharding.encode(cid)
        const target = path.join(locations[network], dir)
        if (!made.has(dir)) {
          await fs.mkdir(target, { recursive: true })
          made.add(dir)
        }
        await fs.rename(path.join(location, dir, file), path.join(target, file))
      }
    }
  })))
}

/**
 * Blocks kept as files under `<dataDir>/ipfs/<network>`, the directories created on first use; uploads staged under
 * `<dataDir>/ipfs/staging` (what a crash left there is removed at start: one node owns a data dir).
 */
export const layer = (options: { readonly dataDir: string }) =>
  Layer.effect(ContentStore, Effect.gen(function*() {
    const locations = { public: path.join(options.dataDir, "ipfs", "public"), private: path.join(options.dataDir, "ipfs", "private") }
    const staging = path.join(options.dataDir, "ipfs", "staging")
    yield* Effect.promise(() => fs.rm(staging, { recursive: true, force: true }))
    return yield* make({
      public: yield* openFsBlockstore(locations.public),
      private: yield* openFsBlockstore(locations.private)
    }, fsStaging(staging, locations))
  }))

/** Blocks kept in memory, a fresh pair of stores each time the layer is built: for tests and the simulated runtime. */
export const layerMemory = Layer.effect(
  ContentStore,
  Effect.suspend(() => make({ public: new MemoryBlockstore(), private: new MemoryBlockstore() }))
)
