/**
 * Staging a file as the raw leaves an import would cut it into (StagedLeaves.ts): each 1 MiB piece (Kubo's
 * `size-1048576` chunker) hashed with SHA-256 once full and written to a file of its own (LeafWorker.ts), while the
 * next one fills; and reading the staged leaves back.
 * An upload's file part arrives before the fields that say which network and CID version it is for, so it is staged
 * first; an adapter that keeps raw leaves as files (the embedded store) then moves the leaves into its blockstore by
 * rename and builds only the root, and any other adapter reads the bytes back as a stream (docs/performance.md,
 * "bench:upload"). Leaves are filled in reused buffers, so staging allocates nothing per byte: the allocations of a
 * join, a read-back and a chunker's copy, and pieces kept alive too long, are what made large uploads spend half
 * their CPU in the garbage collector.
 */
import { Effect, Stream } from "effect"
import { open, readFile } from "node:fs/promises"
import * as path from "node:path"
import { leafBytes, type StagedLeaves, withStagedLeaves } from "../StagedLeaves.ts"
import { hashAndWriteLeaf } from "./LeafWorker.ts"

/**
 * Leaf buffers reused from one leaf (and one upload) to the next. The parser's pieces are copied in (a memcpy, ~1%
 * of hashing's cost) and dropped at once, so they die young; a piece kept until its whole leaf is written would
 * outlive a few scavenges, and every such piece's memory is freed only by a mark-compact of the old generation.
 */
const pool: Array<Buffer> = []
const poolLimit = 8

const take = (size: number) => {
  const reused = pool.pop()
  return reused !== undefined && reused.byteLength === size ? reused : Buffer.allocUnsafeSlow(size)
}

/**
 * Leaves of one upload hashed and written at once; the next leaf is filled beside them. Six rather than three: the
 * route then waits on the oldest less often (99 MiB uploads 0.29–0.33x openssl against 0.26–0.27x on a quiet
 * machine, and ahead in five of five pairs at load; docs/performance.md, "Six leaves in flight").
 */
const leavesInFlight = 6

const giveBack = (buffer: Buffer) => {
  if (buffer.byteLength > 0 && pool.length < poolLimit) pool.push(buffer)
}

/**
 * Cuts a file's bytes, given in pieces of any size, into leaves of `size` bytes under `directory` (which must exist
 * and be the writer's alone). At most eight leaves are in memory: the one being filled, six being hashed and
 * written, and the oldest one waited for (three writes at once kept 99 MiB uploads ~10% faster than one, six faster
 * again, docs/performance.md).
 */
export class LeafWriter {
  readonly #directory: string
  readonly #leafBytes: number
  readonly #leaves: Array<{ readonly file: string; readonly size: number; sha256: Uint8Array }> = []
  #buffer: Buffer | undefined
  #filled = 0
  #size = 0
  /** The leaves being hashed and written, oldest first (each settles without failing). */
  readonly #inFlight: Array<Promise<void>> = []
  #failure: { readonly cause: unknown } | undefined

  constructor(directory: string, size: number = leafBytes) {
    this.#directory = directory
    this.#leafBytes = size
  }

  /** Bytes given so far. */
  get size() {
    return this.#size
  }

  /**
   * Takes the next piece (copied: the caller may reuse it). When a leaf is complete and too many are still being
   * written, returns the oldest one's write: wait for it before the next piece. After a failed write (a full disk),
   * every call returns that failure, as a rejected promise the caller already waits on, never as a throw.
   */
  write(piece: Uint8Array): Promise<void> | undefined {
    if (this.#failure !== undefined) return Promise.reject(this.#failure.cause)
    this.#size += piece.byteLength
    let wait: Promise<void> | undefined
    for (let at = 0; at < piece.byteLength;) {
      this.#buffer ??= take(this.#leafBytes)
      const copied = Math.min(this.#leafBytes - this.#filled, piece.byteLength - at)
      this.#buffer.set(piece.subarray(at, at + copied), this.#filled)
      this.#filled += copied
      at += copied
      if (this.#filled === this.#leafBytes) {
        const oldest = this.#flush()
        if (oldest !== undefined) wait = wait === undefined ? oldest : Promise.all([wait, oldest]).then(() => undefined)
      }
    }
    return wait
  }

  /** Writes the last leaf and waits for every write: the staged file. */
  async end(): Promise<StagedLeaves> {
    if (this.#filled > 0 || this.#leaves.length === 0) this.#flush()
    await Promise.all(this.#inFlight)
    if (this.#failure !== undefined) throw this.#failure.cause
    return { leaves: this.#leaves, size: this.#size, leafBytes: this.#leafBytes }
  }

  /**
   * Hands the filled leaf over to be hashed and written off the main thread (LeafWorker.ts: a worker thread, so it
   * overlaps the socket reads), beside the leaves still in flight; once more than `leavesInFlight` are, returns the
   * oldest one's hash and write, to wait for.
   */
  #flush(): Promise<void> | undefined {
    const file = path.join(this.#directory, String(this.#leaves.length))
    const buffer = this.#buffer ?? Buffer.alloc(0)
    const staged = { file, size: this.#filled, sha256: new Uint8Array() }
    this.#leaves.push(staged)
    this.#buffer = undefined
    this.#filled = 0
    // A failed write is kept and thrown by the next write or end, never left as an unhandled rejection. The
    // buffer goes back to the pool once hashed and written (a transferred one comes back as a new Buffer).
    this.#inFlight.push(hashAndWriteLeaf(file, buffer, staged.size).then(
      (written) => {
        staged.sha256 = written.sha256
        giveBack(written.buffer)
      },
      (cause: unknown) => {
        this.#failure ??= { cause }
      }
    ))
    return this.#inFlight.length > leavesInFlight ? this.#inFlight.shift() : undefined
  }
}

/**
 * The staged file as content for `ContentStore.add`: a stream of its leaves' bytes (read one leaf at a time) that
 * also says where they are, so an adapter that can take the leaves as they are (`stagedLeavesOf`) skips reading
 * them. The leaves must stay until the add is done.
 */
export const stagedContent = (staged: StagedLeaves): Stream.Stream<Uint8Array, unknown> =>
  withStagedLeaves(
    Stream.fromIterable(staged.leaves).pipe(
      Stream.mapEffect((leaf) => Effect.tryPromise(() => readFile(leaf.file)))
    ),
    staged
  )

/** The staged file's first bytes (up to `bytes`), to sniff its type from. */
export const readStagedStart = async (staged: StagedLeaves, bytes: number): Promise<Uint8Array> => {
  const first = staged.leaves[0]
  if (first === undefined) return new Uint8Array()
  const handle = await open(first.file, "r")
  try {
    const buffer = Buffer.alloc(Math.min(bytes, first.size))
    const { bytesRead } = await handle.read(buffer, 0, buffer.byteLength, 0)
    return buffer.subarray(0, bytesRead)
  } finally {
    await handle.close()
  }
}

/** The staged file's bytes in one buffer (folders are imported from memory). */
export const readStaged = async (staged: StagedLeaves): Promise<Uint8Array> =>
  Buffer.concat(await Promise.all(staged.leaves.map((leaf) => readFile(leaf.file))))
