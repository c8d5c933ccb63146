/**
 * Hashing and writing staged leaves off the main thread. A filled leaf's buffer is handed to a worker thread by
 * transfer (no copy): the worker hashes it with `createHash` (OpenSSL), writes it to its file and hands the buffer
 * back. WebCrypto's digest, the fallback, also runs off the main thread but first copies the leaf there, and the
 * write then runs as `writeFile`'s chain of callbacks on the main thread too; on a 99 MiB upload that is ~40 ms of
 * the main thread's time, which on two cores is the time the socket is not read (docs/performance.md,
 * "The leaves' worker"). Where workers cannot be made (or `CAIRN_LEAF_WORKERS=0`), the fallback is used.
 */
import { writeFile } from "node:fs/promises"
import { availableParallelism } from "node:os"
import { Worker } from "node:worker_threads"

/** A hashed and written leaf: its SHA-256, and its buffer back to be reused (a transferred one comes back anew). */
export interface WrittenLeaf {
  readonly sha256: Uint8Array<ArrayBuffer>
  readonly buffer: Buffer
}

/** What failed in the worker: enough of the error to report it (its code, e.g. `ENOSPC`, `EEXIST`). */
interface WorkerFailure {
  readonly message: string
  readonly code?: string
}

interface Reply {
  readonly id: number
  readonly sha256: Uint8Array
  readonly buffer: ArrayBuffer
  readonly failure?: WorkerFailure
}

// The worker's whole program, run from this string so it needs no file of its own beside a bundle.
const program = `
const { parentPort } = require("node:worker_threads")
const { createHash } = require("node:crypto")
const { writeFileSync } = require("node:fs")
parentPort.on("message", ({ id, file, buffer, length }) => {
  const leaf = new Uint8Array(buffer, 0, length)
  const sha256 = createHash("sha256").update(leaf).digest()
  let failure
  try {
    writeFileSync(file, leaf, { flag: "wx" })
  } catch (error) {
    failure = { message: String(error && error.message), code: error && error.code }
  }
  parentPort.postMessage({ id, sha256, buffer, failure }, [buffer])
})
`

/**
 * Workers to hash and write leaves: one core's worth fewer than the machine has (the main thread reads the sockets),
 * at least one, at most four; `CAIRN_LEAF_WORKERS` sets it (`0`: none, hash on the main thread's side as before).
 */
const workerCount = Number(process.env["CAIRN_LEAF_WORKERS"] ?? Math.min(4, Math.max(1, availableParallelism() - 1)))

interface Pending {
  readonly resolve: (leaf: WrittenLeaf) => void
  readonly reject: (cause: unknown) => void
}

/** One worker and the leaves it has been given; a worker that stops fails its leaves and is made anew when next needed. */
class LeafThread {
  #worker: Worker | undefined
  readonly #pending = new Map<number, Pending>()
  #next = 0

  get load() {
    return this.#pending.size
  }

  #start(): Worker {
    // None of the process's flags: `--input-type=module` would make the program a module, without `require`.
    const worker = new Worker(program, { eval: true, execArgv: [] })
    worker.on("message", (reply: Reply) => {
      const pending = this.#pending.get(reply.id)
      if (pending === undefined) return
      this.#pending.delete(reply.id)
      if (this.#pending.size === 0) worker.unref()
      if (reply.failure !== undefined) pending.reject(Object.assign(new Error(reply.failure.message), { code: reply.failure.code }))
      else pending.resolve({ sha256: new Uint8Array(reply.sha256), buffer: Buffer.from(reply.buffer) })
    })
    const stopped = (cause: unknown) => {
      if (this.#worker !== worker) return
      this.#worker = undefined
      for (const pending of this.#pending.values()) pending.reject(cause)
      this.#pending.clear()
    }
    worker.on("error", stopped)
    worker.on("exit", (code) => stopped(new Error(`the leaf worker stopped (exit code ${code})`)))
    // Held (ref) only while it has leaves: an idle worker never keeps a process alive. After the listeners, since
    // adding a "message" listener refs the worker's port again.
    worker.unref()
    return worker
  }

  /** Starts the worker if it is not running; throws where the runtime cannot start it. */
  ready(): Worker {
    return this.#worker ??= this.#start()
  }

  hashAndWrite(file: string, buffer: Buffer, length: number): Promise<WrittenLeaf> {
    const worker = this.ready()
    const id = this.#next++
    const reply = new Promise<WrittenLeaf>((resolve, reject) => this.#pending.set(id, { resolve, reject }))
    if (this.#pending.size === 1) worker.ref()
    try {
      const memory = buffer.buffer as ArrayBuffer
      worker.postMessage({ id, file, buffer: memory, length }, [memory])
    } catch (cause) {
      this.#pending.delete(id)
      if (this.#pending.size === 0) worker.unref()
      return Promise.reject(cause)
    }
    return reply
  }
}

/** The workers, made on first use; undefined where workers are off or cannot be made. */
let threads: Array<LeafThread> | undefined | null = null

const available = (): Array<LeafThread> | undefined => {
  if (threads !== null) return threads
  threads = workerCount > 0 && typeof Worker === "function" ? Array.from({ length: workerCount }, () => new LeafThread()) : undefined
  return threads
}

/** Whether `buffer` owns its whole memory, so it can be transferred (buffers from `Buffer.allocUnsafeSlow` do). */
const transferable = (buffer: Buffer) => buffer.byteOffset === 0 && buffer.buffer.byteLength === buffer.byteLength && buffer.byteLength > 0

/** Hashes the first `length` bytes of `buffer` with WebCrypto and writes them to `file` (which must not exist). */
const onMainThread = async (file: string, buffer: Buffer, length: number): Promise<WrittenLeaf> => {
  const leaf = buffer.subarray(0, length)
  const [digest] = await Promise.all([crypto.subtle.digest("SHA-256", leaf), writeFile(file, leaf, { flag: "wx" })])
  return { sha256: new Uint8Array(digest), buffer }
}

/**
 * Hashes the first `length` bytes of `buffer` and writes them to `file` (which must not exist): in a worker when
 * there is one and the buffer can be transferred (it is then unusable until it comes back as `buffer`), else here.
 */
export const hashAndWriteLeaf = (file: string, buffer: Buffer, length: number): Promise<WrittenLeaf> => {
  const pool = transferable(buffer) ? available() : undefined
  if (pool === undefined) return onMainThread(file, buffer, length)
  let least = pool[0]!
  for (const thread of pool) if (thread.load < least.load) least = thread
  try {
    least.ready()
  } catch {
    // A runtime that has `Worker` but cannot start this one (no eval workers): hash here from now on.
    threads = undefined
    return onMainThread(file, buffer, length)
  }
  return least.hashAndWrite(file, buffer, length)
}
