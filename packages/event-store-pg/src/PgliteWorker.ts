/**
 * The embedded database opened early, in a worker thread: a server's entry point (apps/server-node/src/main.ts,
 * with `PGLITE_WORKER=on`) calls `openEarly()` before it loads its modules, so PGlite's start (~0.5 s of CPU:
 * Postgres starting inside WebAssembly) runs on the machine's other core while the main thread loads the server;
 * `PgDatabase.layerPglite` then `claim`s it for its data directory and speaks to it through the same wire bridge
 * (PgliteStream.ts), each write's messages and their answer crossing through a shared buffer (PgliteChannel.ts).
 * PGlite's statements run there too, off the main thread, at the price of two thread wake-ups per statement (1.3–2x
 * a statement's wall time on a busy machine: docs/performance.md, "The worker's shared channel").
 * The database's lock (`<dir>.lock`, DataDirLock.ts) is taken here, before the worker opens anything; when another
 * process holds it nothing is started, and the layer reports it as it always has. Nothing here imports Effect or
 * PGlite, so calling it costs the entry point nothing. The worker never keeps the process alive by itself: it is
 * referenced only while the main thread waits on it.
 */
import * as Path from "node:path"
import { Worker } from "node:worker_threads"
import * as LockFile from "./DataDirLockFile.ts"
import * as Channel from "./PgliteChannel.ts"
import type { Backend } from "./PgliteStream.ts"
import * as PgliteTemplate from "./PgliteTemplate.ts"
import type { Options, Reply, WorkerData } from "./PgliteWorkerThread.ts"

/** A database opening in a worker, for the layer that claims it. */
export interface Early {
  /** Resolves once the database is open, with the bridge to it; rejects when it could not be opened. */
  readonly open: () => Promise<Backend>
  /** Closes the database, ends the worker and gives the lock up. */
  readonly close: () => Promise<void>
}

const started = new Map<string, Early>()

/** The embedded database's directory and template directory as `PgDatabase.fromConfig` reads them. */
export const fromEnvironment = (): Options => {
  const templates = process.env["PGLITE_TEMPLATE_DIR"] ?? PgliteTemplate.defaultDirectory()
  return {
    dataDir: `${process.env["DATA_DIR"] ?? "./data"}/pg`,
    templates: templates === "off" ? undefined : templates
  }
}

/** How long the worker polls for the next request before it sleeps: `PGLITE_WORKER_SPIN` microseconds. */
const spinFromEnvironment = () => {
  const micros = Number(process.env["PGLITE_WORKER_SPIN"] ?? defaultSpinMicros)
  return Number.isFinite(micros) && micros >= 0 ? micros : defaultSpinMicros
}
const defaultSpinMicros = 0

/** How long a closed database's thread has to end by itself before it is terminated. */
const endGraceMillis = 5_000

/**
 * Starts opening the database in `options.dataDir` in a worker, unless its lock is another process's.
 * `channelSize` (bytes) is the shared buffer's data area (tests make it small to exercise the pieces).
 */
export const openEarly = (
  options: Options = fromEnvironment(),
  { channelSize = Channel.defaultSize, spinMicros = spinFromEnvironment() }: {
    readonly channelSize?: number
    readonly spinMicros?: number
  } = {}
): void => {
  const dataDir = Path.resolve(options.dataDir)
  if (started.has(dataDir)) return
  const lock = LockFile.acquireSync(`${dataDir}.lock`)
  if ("heldBy" in lock) return
  const buffer = Channel.make(channelSize)
  const channel = Channel.of(buffer)
  const capacity = channel.data.length
  let worker: Worker
  try {
    worker = new Worker(new URL("./PgliteWorkerThread.ts", import.meta.url), {
      workerData: { dataDir, templates: options.templates, channel: buffer, spinMicros } satisfies WorkerData
    })
  } catch {
    LockFile.releaseSync(lock)
    return
  }
  worker.unref()

  // The main thread waits on the worker: referenced while anything is pending, so the process stays up meanwhile.
  let waiting = 0
  const waitOn = <A>(promise: Promise<A>): Promise<A> => {
    if (waiting++ === 0) worker.ref()
    return promise.finally(() => {
      if (--waiting === 0) worker.unref()
    })
  }

  let exited: Error | undefined
  const ended = new Promise<void>((resolve) => worker.once("exit", () => resolve()))
  const opened = new Promise<void>((resolve, reject) => {
    worker.on("message", (reply: Reply) => {
      if (reply.type === "opened") resolve()
      else reject(new Error(`The embedded database did not open: ${reply.message}`))
    })
    const fail = (error: Error) => {
      exited ??= error
      reject(error)
      // A request waiting for its answer sees `exited`.
      Channel.release(channel)
    }
    worker.on("error", fail)
    worker.on("exit", (code) => fail(new Error(`The embedded database's worker exited (code ${code})`)))
  })
  // Seen by `open()`; not an unhandled rejection before anyone claims it.
  opened.catch(() => {})

  /** Waits for the worker's piece; fails when the worker ended instead. */
  const turn = async () => {
    await Channel.waitForMainTurn(channel)
    if (exited !== undefined) throw exited
    return Channel.read(channel)
  }

  /**
   * One exchange: the request (in pieces when larger than the channel), then each piece of the answer handed to
   * `onPiece` (a view of the channel, to be copied before the next).
   */
  const exchange = async (kind: number, request: Uint8Array | undefined, onPiece: (bytes: Uint8Array) => void) => {
    if (exited !== undefined) throw exited
    let offset = 0
    let piece: Channel.Piece
    for (;;) {
      const bytes = request?.subarray(offset, offset + capacity)
      offset += bytes?.length ?? 0
      const more = request !== undefined && offset < request.length
      Channel.write(channel, Channel.WORKER, kind, bytes, more)
      piece = await turn()
      if (!more) break
    }
    // Every piece is taken, even after a failure, so that the next exchange starts with the worker waiting for it.
    const failures: Array<Uint8Array> = []
    let thrown: { readonly error: unknown } | undefined
    for (;;) {
      if (piece.kind === Channel.FAILED) failures.push(piece.bytes.slice())
      else if (thrown === undefined) {
        try {
          onPiece(piece.bytes)
        } catch (error) {
          thrown = { error }
        }
      }
      if (!piece.more) break
      Channel.write(channel, Channel.WORKER, Channel.CONTINUE)
      piece = await turn()
    }
    if (failures.length > 0) throw new Error(Buffer.concat(failures).toString("utf8"))
    if (thrown !== undefined) throw thrown.error
  }

  // One exchange at a time, whoever asks (PgliteStream runs one connection's writes in order; a rollback or the
  // close may come from elsewhere).
  let queue: Promise<unknown> = Promise.resolve()
  const request = (kind: number, messages?: Uint8Array, onPiece: (bytes: Uint8Array) => void = () => {}) => {
    const result = queue.then(() => waitOn(exchange(kind, messages, onPiece)))
    queue = result.catch(() => {})
    return result
  }

  const backend: Backend = {
    run: (messages, onData) =>
      request(Channel.RUN, messages, (bytes) => {
        if (bytes.length > 0) onData(bytes)
      }),
    rollbackOpenTransaction: () => request(Channel.ROLLBACK)
  }

  /**
   * After the database closed, the thread ends by itself; it is terminated only when it has not ended a while
   * later (a thread stopped in the middle of its work is the one way to end it that V8 has had faults in).
   */
  const end = async () => {
    let timer: ReturnType<typeof setTimeout> | undefined
    const late = new Promise<"late">((resolve) => timer = setTimeout(() => resolve("late"), endGraceMillis))
    const outcome = await waitOn(Promise.race([ended, late]))
    clearTimeout(timer)
    if (outcome === "late") await worker.terminate()
  }

  let closing: Promise<void> | undefined
  started.set(dataDir, {
    open: () => waitOn(opened).then(() => backend),
    close: () =>
      closing ??= request(Channel.CLOSE).then(() => undefined, () => undefined)
        .then(end)
        .then(() => LockFile.releaseSync(lock), () => LockFile.releaseSync(lock))
  })
}

/** The database opening early in `dataDir`, if one is, for the caller to use and close; no one else gets it. */
export const claim = (dataDir: string): Early | undefined => {
  const resolved = Path.resolve(dataDir)
  const early = started.get(resolved)
  started.delete(resolved)
  return early
}
