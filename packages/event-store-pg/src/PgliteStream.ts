/**
 * Bridges `@effect/sql-pg` to an in-process PGlite database: a Duplex that frames the Postgres wire protocol the
 * client writes and hands it to PGlite, so embedded and server Postgres share one client and one SQL path.
 * `@effect/sql-pglite` does not load on Effect 4.1 (docs/decisions/0002-embedded-postgres.md).
 * The complete messages of one write (a statement's Parse, Bind, Describe, Execute and Sync come in one) go to PGlite
 * in one call: its backend loop reads them one after the other as a server reads its socket, while each call costs
 * a lock, a round of promises and a file-system sync besides the work.
 */
import type { PGlite } from "@electric-sql/pglite"
import { Duplex } from "node:stream"

/** Where the messages go: PGlite in this thread, or in a worker thread (PgliteWorker.ts). */
export interface Backend {
  /** Runs complete messages, one call at a time; `onData` gets the answers' bytes. */
  readonly run: (messages: Uint8Array, onData: (chunk: Uint8Array) => void) => Promise<void>
  /** Rolls back a transaction left open. */
  readonly rollbackOpenTransaction: () => Promise<void>
}

/** PGlite in this thread. */
export const inProcess = (db: PGlite): Backend => ({
  run: (messages, onData) => db.runExclusive(() => db.execProtocolRawStream(messages, { onRawData: onData })),
  rollbackOpenTransaction: async () => {
    if (!db.closed && db.isInTransaction()) await db.exec("ROLLBACK")
  }
})

const SSL_REQUEST = 80877103
const CANCEL_REQUEST = 80877102
const TERMINATE = 0x58 // 'X'

export const makePgliteStream = (db: PGlite) => makeStream(inProcess(db))

export const makeStream = (backend: Backend) => (): Duplex => {
  let buffered: Buffer = Buffer.alloc(0)
  let started = false
  let queue: Promise<void> = Promise.resolve()
  const run = (messages: Uint8Array) =>
    backend.run(messages, (chunk) => {
      duplex.push(Buffer.from(chunk))
    })
  /** Hands the first `length` bytes of the buffer (whole messages) to PGlite, after what was handed before. */
  const handOver = (length: number) => {
    // A copy: the buffer is the client's chunk, and PGlite reads it later.
    const messages = new Uint8Array(buffered.subarray(0, length))
    buffered = buffered.subarray(length)
    queue = queue.then(() => run(messages))
  }
  const duplex = new Duplex({
    read() {},
    write(chunk: Buffer, _encoding, callback) {
      buffered = buffered.length ? Buffer.concat([buffered, chunk]) : chunk
      // The complete messages at the buffer's start not yet handed over: the next call's batch.
      let pending = 0
      for (;;) {
        if (!started) {
          // The startup packet has no type byte: int32 length, int32 code. PGlite takes it in a call of its own.
          if (buffered.length < 8) break
          const length = buffered.readInt32BE(0)
          const code = buffered.readInt32BE(4)
          if (buffered.length < length) break
          if (code === SSL_REQUEST || code === CANCEL_REQUEST) {
            buffered = buffered.subarray(length)
            duplex.push(code === SSL_REQUEST ? Buffer.from("N") : null)
            continue
          }
          started = true
          handOver(length)
        } else {
          if (buffered.length - pending < 5) break
          const length = 1 + buffered.readInt32BE(pending + 1)
          if (buffered.length - pending < length) break
          if (buffered[pending] === TERMINATE) {
            if (pending > 0) handOver(pending)
            pending = 0
            buffered = buffered.subarray(length)
            queue = queue.then(() => {
              duplex.push(null)
            })
            continue
          }
          pending += length
        }
      }
      if (pending > 0) handOver(pending)
      queue = queue.catch((error: unknown) => {
        duplex.destroy(error instanceof Error ? error : new Error(String(error)))
      })
      callback()
    },
    final(callback) {
      queue.then(() => callback(), callback)
    },
    destroy(error, callback) {
      // PGlite has one session: never leave a half-open transaction on it for the next connection.
      queue
        .then(backend.rollbackOpenTransaction)
        .catch(() => {})
        .finally(() => callback(error))
    }
  })
  return duplex
}
