/**
 * The tamper-evident log's arithmetic (docs/audit-proofs.md, decision 0053): an event's hash chained to its stream's
 * previous one, the Merkle root over a block's hashes, and a block's header. Pure: the sealer, `cairn verify` and the
 * export all compute with these, and the offline verifier in `examples/verify-audit-export` does the same from the
 * document alone.
 */
import { sha256 as portableSha256 } from "@noble/hashes/sha2"
import { formatPosition, type LogPosition, type RecordedEvent } from "@cairn/event-store"
import { Result } from "effect"
import * as Hex from "effect/encoding/Hex"

export type Hash = Uint8Array

// The runtime's own SHA-256 where it has one (Node, Bun and Deno all offer `node:crypto` through
// `process.getBuiltinModule`): twice as fast as the portable one, and sealing a block hashes every event three times.
// Reached this way rather than imported, so that this module still loads where there is no `node:crypto`.
const runtimeCrypto = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process?.getBuiltinModule?.("node:crypto") as
  | { readonly hash?: (algorithm: string, data: Uint8Array | string, encoding: string) => Uint8Array & string }
  | undefined
const runtimeHash = typeof runtimeCrypto?.hash === "function" ? runtimeCrypto.hash : undefined

export const sha256 = (bytes: Uint8Array): Hash => runtimeHash !== undefined ? runtimeHash("sha256", bytes, "buffer") : portableSha256(bytes)

/** The hash a stream's first event chains from, and block 1 from. */
export const ZERO: Hash = new Uint8Array(32)

const encoder = new TextEncoder()

/** The hash of an event's data, which stands for it in the event's own hash (an export can then leave it out). */
export const dataHash = (data: unknown): string => {
  const text = JSON.stringify(data)
  return runtimeHash !== undefined ? runtimeHash("sha256", text, "hex") : toHex(portableSha256(encoder.encode(text)))
}

/** The event as the hash reads it: every column of the events table, in a fixed order, the data by its hash. */
export const canonical = (event: RecordedEvent): string =>
  JSON.stringify([
    "cairn-event/1",
    event.position.transactionId.toString(),
    event.position.globalPosition.toString(),
    event.stream,
    event.version,
    event.eventId,
    event.type,
    dataHash(event.data),
    event.metadata,
    event.recordedAt.toISOString()
  ])

// One buffer the events' hash inputs are written into, grown when an event needs more.
let scratch = new Uint8Array(1 << 16)

/** sha256(prev || utf8(canonical(event))). */
export const eventHash = (prev: Hash, event: RecordedEvent): Hash => {
  const text = canonical(event)
  // UTF-8 takes at most 3 bytes per UTF-16 unit.
  if (scratch.length < 32 + text.length * 3) scratch = new Uint8Array(2 * (32 + text.length * 3))
  scratch.set(prev, 0)
  const { written } = encoder.encodeInto(text, scratch.subarray(32))
  return sha256(scratch.subarray(0, 32 + written))
}

/** Pairs hashed with a 0x01 prefix, an odd last one carried up, until one is left; one hash is its own root. */
export const merkleRoot = (leaves: ReadonlyArray<Hash>): Hash => {
  if (leaves.length === 0) throw new Error("merkleRoot: a block has at least one event")
  let level = leaves
  const pair = new Uint8Array(65)
  pair[0] = 1
  while (level.length > 1) {
    const next: Array<Hash> = []
    for (let i = 0; i + 1 < level.length; i += 2) {
      pair.set(level[i]!, 1)
      pair.set(level[i + 1]!, 33)
      next.push(sha256(pair))
    }
    if (level.length % 2 === 1) next.push(level[level.length - 1]!)
    level = next
  }
  return level[0]!
}

/** A block's header; `headerText` fixes its key order, which the signature and the block hash are over. */
export interface BlockHeader {
  readonly v: 1
  readonly block: number
  readonly prev: string
  readonly after: string
  readonly last: string
  readonly count: number
  readonly root: string
  readonly sealedAt: string
}

export const headerText = (header: BlockHeader): string =>
  JSON.stringify({
    v: header.v,
    block: header.block,
    prev: header.prev,
    after: header.after,
    last: header.last,
    count: header.count,
    root: header.root,
    sealedAt: header.sealedAt
  })

export const blockHash = (header: BlockHeader): Hash => sha256(encoder.encode(headerText(header)))

/** A position as headers write it: `"0"` for the log's start. */
export const positionText = (position: LogPosition): string =>
  position.transactionId === 0n && position.globalPosition === 0n ? "0" : formatPosition(position)

// The runtime's own hex codec where it has one (`node:buffer`, as for SHA-256 above): a seal's leaves and the hashes
// they chain from are 128 KiB of hex a block, which Effect's portable codec took a second per 300 blocks to decode.
const runtimeBuffer = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process?.getBuiltinModule?.("node:buffer") as
  | { readonly Buffer?: { from(text: string, encoding: "hex"): Uint8Array; from(buffer: ArrayBufferLike, offset: number, length: number): { toString(encoding: "hex"): string } } }
  | undefined
const NodeBuffer = runtimeBuffer?.Buffer

/** Hashes as the header and the export write them: lowercase hex. */
export const toHex = (bytes: Uint8Array): string =>
  NodeBuffer !== undefined ? NodeBuffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("hex") : Hex.encode(bytes)

/** Hex from the database or a header; anything that is not hex is a defect here, never silently other bytes. */
export const fromHex = (text: string): Hash => {
  // Node's decoder stops at the first character that is not hex: a short result is left to Effect's to refuse.
  const fast = NodeBuffer !== undefined && text.length % 2 === 0 ? NodeBuffer.from(text, "hex") : undefined
  return fast !== undefined && fast.length * 2 === text.length ? fast : Result.getOrThrow(Hex.decode(text))
}

export const sameHash = (a: Hash, b: Hash): boolean => {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}
