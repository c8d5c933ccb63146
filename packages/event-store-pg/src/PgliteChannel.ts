/**
 * The channel between the main thread and the embedded database's worker thread (PgliteWorker.ts,
 * PgliteWorkerThread.ts): one SharedArrayBuffer, a few 32-bit header words and a data area, handed back and forth
 * by its `turn` word. The side whose turn it is writes a piece (its kind, length, whether more pieces follow, and
 * its bytes), gives the turn to the other side and wakes it with `Atomics.notify`. The worker waits for its turn in
 * `Atomics.wait` (it has nothing else to do), the main thread with `Atomics.waitAsync` (it is never blocked). What
 * is larger than the data area goes in pieces, each acknowledged. One exchange at a time.
 * No event-loop turn, no message serialisation and no `postMessage` on either side: a statement costs two wake-ups
 * of a waiting thread at most.
 */

/** Whose turn it is: the main thread's (it may write a request) or the worker's (it may write the answer). */
export const MAIN = 0
export const WORKER = 1

/** What a piece is. Main thread to worker: */
/** Wire messages to run; `more` when the next piece holds more of them. */
export const RUN = 1
/** Roll back a transaction left open. */
export const ROLLBACK = 2
/** Close the database; the worker then ends. */
export const CLOSE = 3
/** Send the next piece of the answer. */
export const CONTINUE = 4
/** Worker to main thread: */
/** Bytes of the answer; `more` when the next piece holds more of them. */
export const ANSWER = 5
/** Send the next piece of the request. */
export const NEXT = 6
/** The request failed: the piece is its message, UTF-8. */
export const FAILED = 7

/** The header's words. */
const TURN = 0
const KIND = 1
const LENGTH = 2
const MORE = 3
const HEADER_BYTES = 16

/** The data area's size unless another is asked for: most answers and requests fit in one piece. */
export const defaultSize = 1024 * 1024

export interface Channel {
  readonly buffer: SharedArrayBuffer
  readonly header: Int32Array
  /** The data area. */
  readonly data: Uint8Array
}

export const make = (size: number = defaultSize): SharedArrayBuffer => new SharedArrayBuffer(HEADER_BYTES + size)

export const of = (buffer: SharedArrayBuffer): Channel => ({
  buffer,
  header: new Int32Array(buffer, 0, HEADER_BYTES / 4),
  data: new Uint8Array(buffer, HEADER_BYTES)
})

export interface Piece {
  readonly kind: number
  /** The piece's bytes: a view of the data area, valid until the turn is given back. */
  readonly bytes: Uint8Array
  readonly more: boolean
}

/** The piece the other side wrote, once it is this side's turn. */
export const read = (channel: Channel): Piece => ({
  kind: channel.header[KIND]!,
  bytes: channel.data.subarray(0, channel.header[LENGTH]!),
  more: channel.header[MORE] === 1
})

/** Writes a piece (`bytes` must fit) and gives the turn to `to`, waking it. */
export const write = (channel: Channel, to: number, kind: number, bytes?: Uint8Array, more = false): void => {
  if (bytes !== undefined) channel.data.set(bytes)
  give(channel, to, kind, bytes?.length ?? 0, more)
}

/** Gives the turn to `to`, waking it, with the piece the data area's first `length` bytes hold. */
export const give = (channel: Channel, to: number, kind: number, length: number, more: boolean): void => {
  const { header } = channel
  header[KIND] = kind
  header[LENGTH] = length
  header[MORE] = more ? 1 : 0
  // Sequentially consistent: the writes above are seen by the side that sees the turn change.
  Atomics.store(header, TURN, to)
  Atomics.notify(header, TURN)
}

export const isTurnOf = (channel: Channel, side: number): boolean => Atomics.load(channel.header, TURN) === side

/**
 * The worker's wait for its turn: polls for `spinMicros` first (a request that follows the last answer closely is
 * then taken without the thread going to sleep and being woken), then blocks.
 */
export const waitForWorkerTurn = (channel: Channel, spinMicros: number): void => {
  if (spinMicros > 0 && !isTurnOf(channel, WORKER)) {
    const until = performance.now() + spinMicros / 1000
    while (!isTurnOf(channel, WORKER) && performance.now() < until) {
      // polling
    }
  }
  while (!isTurnOf(channel, WORKER)) Atomics.wait(channel.header, TURN, MAIN)
}

/** The main thread's wait for its turn, without blocking it. */
export const waitForMainTurn = async (channel: Channel): Promise<void> => {
  while (!isTurnOf(channel, MAIN)) {
    const result = Atomics.waitAsync(channel.header, TURN, WORKER)
    if (result.async) await result.value
  }
}

/** Wakes a main thread waiting for its turn with nothing written: when the worker ended. */
export const release = (channel: Channel): void => {
  Atomics.store(channel.header, TURN, MAIN)
  Atomics.notify(channel.header, TURN)
}
