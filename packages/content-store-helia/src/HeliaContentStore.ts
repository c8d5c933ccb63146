/**
 * The ContentStore port on an embedded @helia/unixfs, without a helia node: one blockstore per network (files under
 * `<dataDir>/ipfs/public` and `<dataDir>/ipfs/private`, or memory) and no libp2p, so a block that is not stored
 * fails at once instead of being looked for on the network. Files are imported with Kubo's settings, so a CID here
 * is the CID `ipfs add` gives for the same bytes.
 */
import { ContentNotFound, ContentStore, ContentStoreUnavailable, type Network } from "@cairn/content-store"
import { type UnixFSComponents, unixfs } from "@helia/unixfs"
import { CarWriter } from "@ipld/car"
import * as dagPb from "@ipld/dag-pb"
import { MemoryBlockstore } from "blockstore-core"
import { FsBlockstore } from "blockstore-fs"
import { Effect, Layer, Stream } from "effect"
import { fixedSize } from "ipfs-unixfs-importer/chunker"
import { balanced } from "ipfs-unixfs-importer/layout"
import { CID } from "multiformats/cid"
import * as path from "node:path"

type Blockstore = UnixFSComponents["blockstore"]

/** `ipfs add --cid-version=<v> --chunker=size-1048576`, raw leaves for v1 only, 1024 links per node. */
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

export const make = (stores: Readonly<Record<Network, Blockstore>>) =>
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

    return ContentStore.of({
      add: (content, { network, cidVersion = 1 }) =>
        Effect.suspend(() => {
          let size = 0
          const counted = content.pipe(Stream.tap((chunk) => Effect.sync(() => (size += chunk.byteLength))))
          return Effect.tryPromise({
            try: (signal) => files[network].addByteStream(Stream.toAsyncIterable(counted), { ...kuboImport(cidVersion), signal }),
            catch: (cause) => new ContentStoreUnavailable({ operation: "add", cause })
          }).pipe(Effect.map((cid) => ({ cid: cid.toString(), size })))
        }),
      cat: (cid, network) =>
        Stream.unwrap(parse(cid, network).pipe(Effect.map((root) =>
          // offline: a missing block is an error at once, never a search.
          Stream.fromAsyncIterable(files[network].cat(root, { offline: true }), failure("cat", cid, network))
        ))),
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
