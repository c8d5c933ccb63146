/**
 * `cairn verify` (docs/audit-proofs.md): the whole log read again in order, every event's hash, every block's root,
 * link and signature computed again and compared with what was sealed. It names the first broken link, the most
 * precise cause first: an event missing, inserted or moved before an edited one, an edited one before a block whose
 * root or signature no longer holds.
 */
import { TokenSigner } from "@cairn/auth"
import { compare, EventStore, formatPosition, type RecordedEvent } from "@cairn/event-store"
import { Effect, Option } from "effect"
import * as LogProof from "./LogProof.ts"
import { LogSeals, positionFrom, type Seal } from "./LogSeals.ts"

/** Where the chain is broken: which block, which event (when one is to blame), and what does not hold. */
export interface BrokenLink {
  readonly block: number
  readonly position: string | null
  readonly stream: string | null
  readonly version: number | null
  readonly problem: string
}

export interface VerifyReport {
  readonly ok: boolean
  readonly blocks: number
  readonly events: number
  /** Events recorded since the last block, not sealed yet (checked by the next `verify`). */
  readonly unsealed: number
  readonly chain: { readonly introducedAt: string; readonly backfilledThrough: string | null } | null
  readonly broken: BrokenLink | null
}

const pageSize = 100

export const verify = Effect.gen(function*() {
  const seals = yield* LogSeals
  const store = yield* EventStore
  const signer = yield* TokenSigner
  const heads = new Map<string, LogProof.Hash>()
  let prevHash = LogProof.toHex(LogProof.ZERO)
  let after = positionFrom("0")
  let blocks = 0
  let events = 0

  const brokenAt = (block: number, problem: string, event?: RecordedEvent): BrokenLink => ({
    block,
    position: event === undefined ? null : formatPosition(event.position),
    stream: event?.stream ?? null,
    version: event?.version ?? null,
    problem
  })

  /** The first broken link in one block (its events as read), or none; `heads` and the counters move on past it. */
  const checkBlock = (seal: Seal, expected: number, read: ReadonlyArray<RecordedEvent>) =>
    Effect.gen(function*() {
      const { header } = seal
      const n = header.block
      if (n !== expected) return brokenAt(expected, `block ${expected} is missing (the next stored is block ${n})`)
      if (header.prev !== prevHash) return brokenAt(n, `block ${n} does not chain from block ${n - 1} (its prev is not that block's hash)`)
      if (header.after !== LogProof.positionText(after)) return brokenAt(n, `block ${n} does not start where block ${n - 1} ended`)
      if (LogProof.toHex(LogProof.blockHash(header)) !== seal.hash) return brokenAt(n, `block ${n}'s stored hash is not its header's`)
      const signed = yield* signer.verifySeal(seal.signature).pipe(Effect.option)
      if (Option.isNone(signed)) return brokenAt(n, `block ${n}'s signature does not verify under the installation's keys`)
      if (signed.value !== LogProof.headerText(header)) return brokenAt(n, `block ${n}'s header is not what its signature signed`)
      if (seal.leaves.length !== header.count) return brokenAt(n, `block ${n} stores ${seal.leaves.length} leaves for ${header.count} events`)
      if (LogProof.toHex(LogProof.merkleRoot(seal.leaves)) !== header.root) return brokenAt(n, `block ${n}'s leaves do not make its root`)

      if (seal.prevs.length !== header.count || seal.positions.length !== header.count) {
        return brokenAt(n, `block ${n} stores ${seal.prevs.length} chained-from hashes and ${seal.positions.length} positions for ${header.count} events`)
      }
      const last = positionFrom(header.last)
      const sealedIndex = new Map(seal.positions.map((position, i) => [position, i]))
      for (let i = 0; i < read.length; i++) {
        const event = read[i]!
        if (compare(event.position, last) > 0) {
          return brokenAt(n, `block ${n} sealed ${header.count} events but holds ${i}: an event was deleted or moved out of it`, event)
        }
        const sealedAt = sealedIndex.get(event.position.globalPosition)
        if (sealedAt === undefined) {
          return brokenAt(n, "no event was sealed at this position: inserted after sealing, or its position edited", event)
        }
        if (sealedAt !== i) {
          return brokenAt(n, `this event was sealed as leaf ${sealedAt} of block ${n}, but is read as leaf ${i}: an event before it was deleted, inserted or moved`, event)
        }
        const prev = heads.get(event.stream) ?? LogProof.ZERO
        if (!LogProof.sameHash(seal.prevs[i]!, prev)) return brokenAt(n, "the hash this event is recorded to chain from is not its stream's previous event's", event)
        const hash = LogProof.eventHash(prev, event)
        if (!LogProof.sameHash(hash, seal.leaves[i]!)) return brokenAt(n, "this event's content does not match its sealed hash: it was edited", event)
        heads.set(event.stream, hash)
      }
      if (read.length < header.count || compare(read[read.length - 1]!.position, last) !== 0) {
        return brokenAt(n, `block ${n} sealed ${header.count} events up to ${header.last}; ${read.length} are there: an event was deleted or moved`)
      }
      blocks++
      events += read.length
      prevHash = seal.hash
      after = last
      return undefined
    })

  let broken: BrokenLink | undefined
  for (let from = 1; broken === undefined;) {
    const page = yield* seals.seals(from, from + pageSize - 1)
    yield* seals.withEvents(page, (seal, read) =>
      Effect.map(checkBlock(seal, from, read), (found) => {
        broken = found
        if (found === undefined) from++
        return found !== undefined
      }))
    if (page.length < pageSize) break
  }
  let unsealed = 0
  if (broken === undefined) {
    for (let cursor = after;;) {
      const tail = yield* store.readAll({ after: cursor, limit: 1000 })
      unsealed += tail.length
      if (tail.length < 1000) break
      cursor = tail[tail.length - 1]!.position
    }
  }
  const chain = yield* seals.chainStart
  return {
    ok: broken === undefined,
    blocks,
    events,
    unsealed,
    chain: Option.getOrNull(chain),
    broken: broken ?? null
  } satisfies VerifyReport
})
