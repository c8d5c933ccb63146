/**
 * The worker thread of PgliteWorker.ts: opens the embedded database (a new one copied from the template first),
 * then serves the main thread's requests through the shared channel (PgliteChannel.ts): it waits in `Atomics.wait`
 * until a request is there, runs its wire messages as the main thread would (PgliteStream's `inProcess`: PGlite's
 * `execProtocolRawStream`), and writes the bytes PGlite answers into the channel as they come. It imports only
 * PGlite and what opening it needs, so it starts at once beside the main thread's module loading.
 *
 * PGlite's calls are asynchronous only in name here: `execProtocolRawStream` runs `execProtocolRawSync`, then
 * `syncToFs()`, which on a directory on disk (PGlite's NodeFS: every write goes straight to its file) does nothing;
 * its locks are free (this thread is their only user). Each `await` is a microtask, so the thread never goes back to
 * its event loop between requests, and a statement is the same work as on the main thread.
 */
import { PGlite } from "@electric-sql/pglite"
import * as Module from "node:module"
import { parentPort, workerData } from "node:worker_threads"
import * as PgliteArtifacts from "./PgliteArtifacts.ts"
import * as PgliteSettings from "./PgliteSettings.ts"
import * as Channel from "./PgliteChannel.ts"
import { inProcess } from "./PgliteStream.ts"
import * as PgliteTemplate from "./PgliteTemplate.ts"

/** What this thread posts, once: the database is open (its requests then come through the channel), or not. */
export type Reply =
  | { readonly type: "opened" }
  | { readonly type: "failed"; readonly message: string }

export interface Options {
  readonly dataDir: string
  readonly templates: string | undefined
}

export interface WorkerData extends Options {
  readonly channel: SharedArrayBuffer
  /** How long the thread polls for the next request before it sleeps (PgliteWorker.ts). */
  readonly spinMicros: number
}

Module.enableCompileCache?.()
const port = parentPort!
const { channel: buffer, dataDir, spinMicros, templates } = workerData as WorkerData
const channel = Channel.of(buffer)
const capacity = channel.data.length
const encoder = new TextEncoder()

/**
 * The answer, written into the channel as PGlite hands it over: when the data area is full and more comes, the
 * piece goes to the main thread and the rest waits for its `CONTINUE`.
 */
const answering = () => {
  let length = 0
  return {
    push: (chunk: Uint8Array) => {
      let offset = 0
      while (offset < chunk.length) {
        if (length === capacity) {
          Channel.give(channel, Channel.MAIN, Channel.ANSWER, length, true)
          Channel.waitForWorkerTurn(channel, spinMicros)
          length = 0
        }
        const piece = chunk.subarray(offset, offset + capacity - length)
        channel.data.set(piece, length)
        length += piece.length
        offset += piece.length
      }
    },
    end: () => Channel.give(channel, Channel.MAIN, Channel.ANSWER, length, false)
  }
}

/** A failure's message as the answer's last piece. */
const fail = (error: unknown) => {
  const message = encoder.encode(error instanceof Error ? error.message : String(error))
  Channel.write(channel, Channel.MAIN, Channel.FAILED, message.subarray(0, capacity))
}

/** The request's messages: one piece, or several each asked for. */
const requestMessages = (first: Channel.Piece) => {
  // Copied out of the channel: the answer is written there while PGlite reads them.
  if (!first.more) return first.bytes.slice()
  const chunks = [first.bytes.slice()]
  let piece = first
  while (piece.more) {
    Channel.write(channel, Channel.MAIN, Channel.NEXT)
    Channel.waitForWorkerTurn(channel, spinMicros)
    piece = Channel.read(channel)
    chunks.push(piece.bytes.slice())
  }
  const all = new Uint8Array(chunks.reduce((total, chunk) => total + chunk.length, 0))
  let offset = 0
  for (const chunk of chunks) {
    all.set(chunk, offset)
    offset += chunk.length
  }
  return all
}

/** Serves requests until one closes the database (each `await` a microtask, as above). */
const serve = async (db: PGlite) => {
  const backend = inProcess(db)
  for (;;) {
    Channel.waitForWorkerTurn(channel, spinMicros)
    const piece = Channel.read(channel)
    try {
      if (piece.kind === Channel.RUN) {
        const messages = requestMessages(piece)
        const answer = answering()
        await backend.run(messages, answer.push)
        answer.end()
      } else if (piece.kind === Channel.ROLLBACK) {
        await backend.rollbackOpenTransaction()
        answering().end()
      } else if (piece.kind === Channel.CLOSE) {
        return
      } else {
        throw new Error(`unexpected request ${piece.kind}`)
      }
    } catch (error) {
      fail(error)
    }
  }
}

const open = async () => {
  const options = { ...(await PgliteArtifacts.prefetch()), startParams: PgliteSettings.startParams(PGlite.defaultStartParams) }
  if (templates !== undefined) await PgliteTemplate.initialise(dataDir, templates, options)
  return PGlite.create(dataDir, options)
}

const main = async () => {
  let db: PGlite
  try {
    db = await open()
  } catch (error) {
    const message = error instanceof Error ? error.stack ?? error.message : String(error)
    port.postMessage({ type: "failed", message } satisfies Reply)
    return
  }
  port.postMessage({ type: "opened" } satisfies Reply)
  await serve(db)
  try {
    await db.close()
    answering().end()
  } catch (error) {
    fail(error)
  }
}

// Not a top-level await: the module's evaluation ends at once, so the thread never ends (or is terminated) while its
// module is still being evaluated asynchronously, a state V8 has had fatal checks in (nodejs/node#43182).
void main().finally(() => port.close())
