/**
 * A byte stream read whole, up to a limit counted while it flows: an oversized body, download or file fails as soon
 * as it passes the limit, never held in full. Pure Effect, so it runs on every platform.
 */
import { Effect, Stream } from "effect"

export const collectWithin = <E, R, TooLarge>(
  stream: Stream.Stream<Uint8Array, E, R>,
  maxBytes: number,
  tooLarge: () => TooLarge
): Effect.Effect<Uint8Array, E | TooLarge, R> =>
  Stream.runFoldEffect(stream, () => ({ chunks: [] as Array<Uint8Array>, size: 0 }), (read, chunk) => {
    read.size += chunk.byteLength
    if (read.size > maxBytes) return Effect.fail(tooLarge())
    read.chunks.push(chunk)
    return Effect.succeed(read)
  }).pipe(Effect.map(({ chunks, size }) => {
    const out = new Uint8Array(size)
    let offset = 0
    for (const chunk of chunks) {
      out.set(chunk, offset)
      offset += chunk.byteLength
    }
    return out
  }))
