/**
 * Bridges `@effect/sql-pg` to an in-process PGlite database: a Duplex that frames the Postgres wire protocol the
 * client writes and hands each message to PGlite, so embedded and server Postgres share one client and one SQL path.
 * `@effect/sql-pglite` does not load on Effect 4.1 (docs/decisions/0002-embedded-postgres.md).
 */
import type { PGlite } from "@electric-sql/pglite"
import { Duplex } from "node:stream"

const SSL_REQUEST = 80877103
const CANCEL_REQUEST = 80877102
const TERMINATE = 0x58 // 'X'

export const makePgliteStream = (db: PGlite) => (): Duplex => {
  let buffered: Buffer = Buffer.alloc(0)
  let started = false
  let queue: Promise<void> = Promise.resolve()
  const run = (message: Uint8Array) =>
    db.runExclusive(() =>
      db.execProtocolRawStream(message, {
        onRawData: (chunk) => {
          duplex.push(Buffer.from(chunk))
        }
      })
    )
  const duplex = new Duplex({
    read() {},
    write(chunk: Buffer, _encoding, callback) {
      buffered = buffered.length ? Buffer.concat([buffered, chunk]) : chunk
      const messages: Array<Uint8Array> = []
      for (;;) {
        if (!started) {
          // The startup packet has no type byte: int32 length, int32 code.
          if (buffered.length < 8) break
          const length = buffered.readInt32BE(0)
          const code = buffered.readInt32BE(4)
          if (buffered.length < length) break
          const message = buffered.subarray(0, length)
          buffered = buffered.subarray(length)
          if (code === SSL_REQUEST) {
            duplex.push(Buffer.from("N"))
            continue
          }
          if (code === CANCEL_REQUEST) {
            duplex.push(null)
            continue
          }
          started = true
          messages.push(new Uint8Array(message))
        } else {
          if (buffered.length < 5) break
          const length = 1 + buffered.readInt32BE(1)
          if (buffered.length < length) break
          const message = buffered.subarray(0, length)
          buffered = buffered.subarray(length)
          if (message[0] === TERMINATE) {
            queue = queue.then(() => {
              duplex.push(null)
            })
            continue
          }
          messages.push(new Uint8Array(message))
        }
      }
      for (const message of messages) queue = queue.then(() => run(message).then(() => undefined))
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
        .then(async () => {
          if (!db.closed && db.isInTransaction()) await db.exec("ROLLBACK")
        })
        .catch(() => {})
        .finally(() => callback(error))
    }
  })
  return duplex
}
