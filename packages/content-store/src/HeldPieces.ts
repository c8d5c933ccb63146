/**
 * A small upload's bytes as the multipart parser handed them over: its pieces, held in memory and never joined. As
 * `ContentStore.add`'s content it is a stream of the pieces that also says what they are (`heldPiecesOf`), so an
 * adapter can hash them one by one and write them with one `writev` (the embedded store does, for a file that is one
 * raw leaf); any other adapter reads the stream. A 1 MiB upload then allocates no 1 MiB buffer to join its pieces
 * and no chunker's copy of it: that join was ~1.5 ms of a 1 MiB upload's ~17 ms of server CPU, and its memory
 * brought the old generation's collections forward (docs/performance.md, "bench:upload").
 */
import { Stream } from "effect"

/** A file's bytes in pieces, in order, and their total. */
export interface HeldPieces {
  readonly pieces: ReadonlyArray<Uint8Array>
  readonly size: number
}

const heldKey = Symbol.for("@cairn/content-store/HeldPieces")

/** The pieces as content for `ContentStore.add`: a stream of them that also says what they are. */
export const heldContent = (held: HeldPieces): Stream.Stream<Uint8Array, unknown> =>
  Object.assign(Stream.fromIterable(held.pieces), { [heldKey]: held })

/** The pieces behind a stream `heldContent` made, or undefined for any other stream. */
export const heldPiecesOf = (content: Stream.Stream<Uint8Array, unknown>): HeldPieces | undefined =>
  (content as { readonly [heldKey]?: HeldPieces })[heldKey]

/** The first bytes of the pieces (up to `bytes`), to sniff a type from: a view of the first piece when it is enough. */
export const heldStart = (held: HeldPieces, bytes: number): Uint8Array => {
  const first = held.pieces[0]
  if (first === undefined) return new Uint8Array()
  if (first.byteLength >= bytes || held.pieces.length === 1) return first.subarray(0, bytes)
  const start: Array<Uint8Array> = []
  let taken = 0
  for (const piece of held.pieces) {
    if (taken >= bytes) break
    start.push(piece.subarray(0, bytes - taken))
    taken += Math.min(piece.byteLength, bytes - taken)
  }
  return Buffer.concat(start)
}

/** The pieces joined (a folder's files are imported from memory). */
export const heldBytes = (held: HeldPieces): Uint8Array =>
  held.pieces.length === 1 ? held.pieces[0]! : Buffer.concat(held.pieces as Array<Uint8Array>)
