/**
 * The embedded database opened early, in a worker thread: a server's entry point (apps/server-node/src/main.ts,
 * with `PGLITE_WORKER=on`) calls `openEarly()` before it loads its modules, so PGlite's start (~0.5 s of CPU:
 * Postgres starting inside WebAssembly) runs on the machine's other core while the main thread loads the server;
 * `PgDatabase.layerPglite`
 * then `claim`s it for its data directory and speaks to it through the same wire bridge (PgliteStream.ts), each
 * write's messages posted to the worker and its answer posted back. PGlite's statements run there too, off the main
 * thread, at the price of two thread hops per statement (+100–200 µs of wall time each: docs/performance.md).
 * The database's lock (`<dir>.lock`, DataDirLock.ts) is taken here, before the worker opens anything; when another
 * process holds it nothing is started, and the layer reports it as it always has. Nothing here imports Effect or
 * PGlite, so calling it costs the entry point nothing. The worker never keeps the process alive by itself: it is
 * referenced only while the main thread waits on it.
 */
import * as Path from "node:path"
import { Worker } from "node:worker_threads"
import * as LockFile from "./DataDirLockFile.ts"
import type { Backend } from "./PgliteStream.ts"
import * as PgliteTemplate from "./PgliteTemplate.ts"
import type { Options, Reply, Request } from "./PgliteWorkerThread.ts"

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

/** Starts opening the database in `options.dataDir` in a worker, unless its lock is another process's. */
export const openEarly = (options: Options = fromEnvironment()): void => {
  const dataDir = Path.resolve(options.dataDir)
  if (started.has(dataDir)) return
  const lock = LockFile.acquireSync(`${dataDir}.lock`)
  if ("heldBy" in lock) return
  let worker: Worker
  try {
    worker = new Worker(new URL("./PgliteWorkerThread.ts", import.meta.url), {
      workerData: { dataDir, templates: options.templates } satisfies Options
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

  const pending = new Map<number, { resolve: (data: Uint8Array | undefined) => void; reject: (error: Error) => void }>()
  let nextId = 0
  let exited: Error | undefined
  const opened = new Promise<void>((resolve, reject) => {
    worker.on("message", (reply: Reply) => {
      if (reply.type === "opened") resolve()
      else if (reply.type === "failed") reject(new Error(`The embedded database did not open: ${reply.message}`))
      else {
        const request = pending.get(reply.id)
        pending.delete(reply.id)
        if (reply.error !== undefined) request?.reject(new Error(reply.error))
        else request?.resolve(reply.data)
      }
    })
    const fail = (error: Error) => {
      exited = error
      reject(error)
      for (const request of pending.values()) request.reject(error)
      pending.clear()
    }
    worker.on("error", fail)
    worker.on("exit", (code) => fail(new Error(`The embedded database's worker exited (code ${code})`)))
  })
  // Seen by `open()`; not an unhandled rejection before anyone claims it.
  opened.catch(() => {})

  const request = (message: Request, transfer: ReadonlyArray<ArrayBuffer> = []) =>
    waitOn(new Promise<Uint8Array | undefined>((resolve, reject) => {
      if (exited !== undefined) return reject(exited)
      pending.set(message.id, { resolve, reject })
      worker.postMessage(message, [...transfer])
    }))

  const backend: Backend = {
    run: async (messages, onData) => {
      const data = await request({ type: "run", id: nextId++, messages }, [messages.buffer as ArrayBuffer])
      if (data !== undefined && data.length > 0) onData(data)
    },
    rollbackOpenTransaction: () => request({ type: "rollback", id: nextId++ }).then(() => undefined)
  }

  let closing: Promise<void> | undefined
  started.set(dataDir, {
    open: () => waitOn(opened).then(() => backend),
    close: () =>
      closing ??= (exited === undefined ? request({ type: "close", id: nextId++ }).then(() => undefined, () => undefined) : Promise.resolve())
        .then(() => worker.terminate())
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
