/**
 * What the snapshot tree code needs from a block store, and the two helpers every part of it shares: reading a whole
 * block, and writing blocks in batches (one `putMany` per few MiB instead of one await per block).
 */
import type { Blockstore, InputPair } from "interface-blockstore"
import type { CID } from "multiformats/cid"

/** Lets an interrupted import or walk stop between blocks. */
export interface AbortOptions {
  readonly signal?: AbortSignal
}

/** A block store the tree code reads and writes (an embedded blockstore, or Kubo's blocks over RPC). */
export type TreeBlockstore = Pick<Blockstore, "get" | "has" | "put" | "putMany">

/** A stored block's length in bytes, without reading the block where the store can; undefined when it is absent. */
export type BlockSize = (cid: CID, options: AbortOptions) => Promise<number | undefined>

/** Blockstores fail a read of a block they lack with this error name (interface-store's NotFoundError). */
export const isNotFound = (cause: unknown) => cause instanceof Error && cause.name === "NotFoundError"

/** A block's bytes: blockstores hand them out in pieces. */
export const getBlock = async (store: Pick<Blockstore, "get">, cid: CID, options: AbortOptions): Promise<Uint8Array> => {
  const pieces: Array<Uint8Array> = []
  for await (const piece of store.get(cid, options)) pieces.push(piece)
  return pieces.length === 1 ? pieces[0]! : Buffer.concat(pieces)
}

/** Reads the block to learn its length: for stores that cannot say without reading (memory: nothing to read). */
export const blockSizeByReading = (store: Pick<Blockstore, "get">): BlockSize => async (cid, options) => {
  try {
    return (await getBlock(store, cid, options)).byteLength
  } catch (cause) {
    if (isNotFound(cause)) return undefined
    throw cause
  }
}

/** Every item of an iterable, sync or async. */
export const collect = async <A>(items: Iterable<A> | AsyncIterable<A>): Promise<Array<A>> => {
  const all: Array<A> = []
  for await (const item of items) all.push(item)
  return all
}

/**
 * A block's key in memory: blockstores key blocks by multihash (a raw and a dag-pb CID of the same bytes are one
 * block). Base64 by Buffer, which costs a fraction of multiformats' base32 on every block of an import.
 */
export const blockKey = (cid: CID) => {
  const { bytes } = cid.multihash
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64")
}

const batchBlocks = 256
const batchBytes = 4 * 1_048_576

/**
 * Collects blocks and stores them with `putMany` once a batch is full; `flush` stores the rest. Each block goes once
 * per writer, however often it is put (identical chunks, files). Batches are written one after another, and a `put`
 * that fills one waits for it: memory stays bounded however fast the blocks come. A failed batch fails every later
 * `put` and `flush`.
 */
export class BlockWriter {
  private readonly store: Pick<Blockstore, "putMany">
  private readonly options: AbortOptions
  private pending: Array<InputPair> = []
  private pendingBytes = 0
  private readonly queued = new Set<string>()
  private written: Promise<void> = Promise.resolve()

  constructor(store: Pick<Blockstore, "putMany">, options: AbortOptions) {
    this.store = store
    this.options = options
  }

  /** Blockstore-shaped, so the importer and DirSharded can write through it. */
  readonly put = async (cid: CID, value: Uint8Array | Iterable<Uint8Array> | AsyncIterable<Uint8Array>): Promise<CID> => {
    const key = blockKey(cid)
    if (this.queued.has(key)) return cid
    this.queued.add(key)
    const bytes = value instanceof Uint8Array ? value : Buffer.concat(await collect(value))
    this.pending.push({ cid, bytes })
    this.pendingBytes += bytes.byteLength
    if (this.pending.length >= batchBlocks || this.pendingBytes >= batchBytes) await this.flush()
    return cid
  }

  readonly flush = (): Promise<void> => {
    const batch = this.pending
    this.pending = []
    this.pendingBytes = 0
    this.written = this.written.then(async () => {
      this.options.signal?.throwIfAborted()
      if (batch.length > 0) for await (const _ of this.store.putMany(batch, this.options)) { /* drain */ }
    })
    return this.written
  }
}

/**
 * `f` over `items`, at most `limit` at a time, results in the items' order. The first failure rejects at once and
 * stops the workers from starting more.
 */
export const mapConcurrently = async <A, B>(
  items: ReadonlyArray<A>,
  limit: number,
  f: (item: A) => Promise<B>
): Promise<Array<B>> => {
  const results = new Array<B>(items.length)
  let next = 0
  let failed = false
  const worker = async () => {
    while (!failed && next < items.length) {
      const index = next++
      try {
        results[index] = await f(items[index]!)
      } catch (cause) {
        failed = true
        throw cause
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker))
  return results
}
