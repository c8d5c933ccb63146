/**
 * blockstore-fs with a cheaper put. Its own put runs `mkdir -p` on the block's shard directory before every block
 * and writes through steno (a temporary file, then a rename), so a 99 MiB upload costs about 100 recursive mkdirs;
 * this one writes the temporary file first and makes the directory only when the write says it is missing
 * (docs/performance.md, "bench:upload"). The file is still renamed into place, so a block is whole or absent. And
 * a cheaper get: one read of the whole file instead of a stream of 64 KiB pieces the reader joins again (a 1 MiB
 * leaf was 16 reads and a copy; the gateway reads every leaf of every download, bench:gateway).
 */
import { FsBlockstore } from "blockstore-fs"
import { NextToLast } from "blockstore-fs/sharding"
import type { CID } from "multiformats/cid"
import { randomBytes } from "node:crypto"
import { mkdir, open, readFile, rename, rm, writeFile } from "node:fs/promises"
import * as path from "node:path"

type Content = Parameters<FsBlockstore["put"]>[1]

/** A temporary name beside the block's file, unique per write (two writes of one block never share it). */
const prefix = randomBytes(4).toString("hex")
let writes = 0
const temporary = (file: string) => path.join(path.dirname(file), `.${path.basename(file)}.${prefix}-${writes++}.tmp`)

/**
 * Runs `step`, which creates a file in the shard directory of `target`; when it fails because that directory is
 * missing (ENOENT), makes the directory and runs `step` once more.
 */
const intoShard = (target: string, step: () => Promise<unknown>): Promise<unknown> =>
  step().catch(async (cause: NodeJS.ErrnoException) => {
    if (cause.code !== "ENOENT") throw cause
    await mkdir(path.dirname(target), { recursive: true })
    return step()
  })

/** A block this store does not hold: the name every blockstore gives it (interface-store's NotFoundError). */
class BlockNotFound extends Error {
  override readonly name = "NotFoundError"
}

export class FsBlocks extends FsBlockstore {
  /** blockstore-fs's default layout (its own field is private), so blocks land where its get finds them. */
  readonly #sharding: NextToLast

  constructor(location: string) {
    const sharding = new NextToLast()
    super(location, { shardingStrategy: sharding })
    this.#sharding = sharding
  }

  /**
   * The block's bytes in one piece. A block that is not there is a NotFoundError, as blockstore-fs has it (callers
   * tell absent content by that name); any other failure (a disk error) is itself, not absent content.
   */
  override async *get(key: CID, options?: { readonly signal?: AbortSignal }): AsyncGenerator<Uint8Array> {
    const { dir, file } = this.#sharding.encode(key)
    try {
      yield await readFile(path.join(this.path, dir, file), options?.signal === undefined ? {} : { signal: options.signal })
    } catch (cause) {
      const code = (cause as NodeJS.ErrnoException).code
      if (code === "ENOENT" || code === "ENOTDIR") throw new BlockNotFound(`${key} is not stored`)
      throw cause
    }
  }

  override async put(key: CID, value: Content, options?: { readonly signal?: AbortSignal }): Promise<CID> {
    options?.signal?.throwIfAborted()
    return this.#place(key, (file) => writeFile(file, value))
  }

  /**
   * Writes a block with `write` to a temporary file beside its place (making the shard's directory when missing),
   * then renames it into place, so the block is whole or absent.
   */
  async #place(key: CID, write: (file: string) => Promise<unknown>): Promise<CID> {
    const { dir, file } = this.#sharding.encode(key)
    const target = path.join(this.path, dir, file)
    const staged = temporary(target)
    try {
      await intoShard(target, () => write(staged))
      await rename(staged, target)
    } catch (cause) {
      await rm(staged, { force: true })
      throw cause
    }
    return key
  }

  /**
   * A put of a block given in pieces (a small upload as the parser handed it over): written with one `writev`
   * where the runtime has it, never joined, and renamed into place as `put` does, so the block is whole or absent.
   * The caller vouches that the pieces' bytes hash to `key`.
   */
  putPieces(key: CID, pieces: ReadonlyArray<Uint8Array>): Promise<CID> {
    return this.#place(key, (file) => writePieces(file, pieces))
  }

  /**
   * Moves a file holding the block's bytes into place by rename (same filesystem): a staged raw leaf becomes a block
   * without being read or written again. When the block is already stored the file stays where it is, for the caller
   * to remove. The caller vouches that the bytes hash to `key`.
   */
  async adopt(key: CID, file: string): Promise<void> {
    const { dir, file: name } = this.#sharding.encode(key)
    const target = path.join(this.path, dir, name)
    // A block already stored stays, and the staged file is left to its owner's clean-up: renaming over the stored
    // block would free its disk blocks, a synchronous discard per block on a filesystem mounted with `discard`, while
    // a staged file written a moment ago usually has none allocated yet (docs/performance.md, "The leaves' worker").
    if (await this.has(key)) return
    await intoShard(target, () => rename(file, target))
  }
}

/** Writes the pieces to a new file, in order: one `writev` (repeated for what a short write left), else a write each. */
const writePieces = async (file: string, pieces: ReadonlyArray<Uint8Array>) => {
  const handle = await open(file, "w")
  try {
    if (typeof handle.writev !== "function") {
      for (const piece of pieces) await handle.write(piece)
      return
    }
    let left = pieces.filter((piece) => piece.byteLength > 0)
    while (left.length > 0) {
      let { bytesWritten } = await handle.writev(left as Array<Uint8Array>)
      if (bytesWritten === 0) throw new Error(`writev wrote nothing to ${file}`)
      while (left.length > 0 && bytesWritten >= left[0]!.byteLength) bytesWritten -= left.shift()!.byteLength
      if (bytesWritten > 0) left[0] = left[0]!.subarray(bytesWritten)
    }
  } finally {
    await handle.close()
  }
}
