/**
 * The tamper-evident log as its users reach it (docs/audit-proofs.md): `verify`, the whole log checked against its
 * seals, and `exportCar`, a workspace's sealed events with their proofs as a CAR that a third party checks offline
 * (`examples/verify-audit-export`). The export reads the log block by block as it was sealed, so a block's events
 * come with their leaf indexes, and other workspaces' events appear only as hashes among the leaves.
 */
import { TokenSigner } from "@cairn/auth"
import { Audit } from "@cairn/domain"
import { compare, EventStore, formatPosition, type RecordedEvent } from "@cairn/event-store"
import { CarWriter } from "@ipld/car"
import { Context, Effect, Layer, Stream } from "effect"
import { CID } from "multiformats/cid"
import * as Digest from "multiformats/hashes/digest"
import type { Point } from "../agents/AgentsAt.ts"
import * as EventOwners from "./EventOwners.ts"
import * as LogProof from "./LogProof.ts"
import { LogSeals, positionFrom, type Seal } from "./LogSeals.ts"
import * as LogVerify from "./LogVerify.ts"

/** Where an export starts: after a log position, or after a time (events recorded later): `?at=`'s points. */
export type Since = Point

/** The multicodec of plain JSON blocks. */
const jsonCodec = 0x0200
const encoder = new TextEncoder()

const block = (value: unknown) => {
  const bytes = encoder.encode(JSON.stringify(value))
  return { cid: CID.createV1(jsonCodec, Digest.create(0x12, LogProof.sha256(bytes))), bytes }
}

/** An event as an export carries it: a sealed value's ciphertext left out, the data then by its hash. */
const exported = (event: RecordedEvent, index: number, prev: string) => {
  const text = JSON.stringify(event.data)
  const shown = text.includes("\"sealed\"") ? Audit.shownData(event.data) : event.data
  const redacted = shown !== event.data && JSON.stringify(shown) !== text
  return {
    index,
    prev,
    position: formatPosition(event.position),
    stream: event.stream,
    version: event.version,
    eventId: event.eventId,
    type: event.type,
    data: shown,
    ...(redacted ? { redacted: true, dataHash: LogProof.dataHash(event.data) } : {}),
    metadata: event.metadata,
    recordedAt: event.recordedAt.toISOString()
  }
}

const sealsPerPage = 50

export class AuditLog extends Context.Service<AuditLog>()("cairn/AuditLog", {
  make: Effect.gen(function*() {
    const seals = yield* LogSeals
    const store = yield* EventStore
    const signer = yield* TokenSigner
    const owners = EventOwners.make(store)

    const verify = LogVerify.verify.pipe(
      Effect.provideService(LogSeals, seals),
      Effect.provideService(EventStore, store),
      Effect.provideService(TokenSigner, signer)
    )

    /** The workspace's events in one block (as read) after `since`, with their leaf indexes, as the export's seal entry. */
    const sealEntry = (seal: Seal, events: ReadonlyArray<RecordedEvent>, workspaceId: string, since: Since) =>
      Effect.gen(function*() {
        const isOf = owners.isOf(workspaceId)
        const mine: Array<{ readonly event: RecordedEvent; readonly index: number }> = []
        for (let index = 0; index < events.length; index++) {
          const event = events[index]!
          const later = since._tag === "Position" ? compare(event.position, since.position) > 0 : event.recordedAt > since.time
          if (later && (yield* isOf(event))) mine.push({ event, index })
        }
        if (mine.length === 0) return undefined
        return {
          kind: "seal",
          block: seal.header.block,
          header: seal.header,
          signature: seal.signature,
          leaves: seal.leaves.map(LogProof.toHex),
          events: mine.map(({ event, index }) => exported(event, index, LogProof.toHex(seal.prevs[index] ?? LogProof.ZERO)))
        }
      })

    /** The CAR, streamed as it is read: a manifest, a seal entry per block holding the workspace's events, an end. */
    const exportCar = (workspaceId: string, since: Since): Stream.Stream<Uint8Array> =>
      Stream.unwrap(Effect.gen(function*() {
        const manifest = block({
          format: "cairn-audit-export/1",
          workspaceId,
          since: since._tag === "Position" ? LogProof.positionText(since.position) : since.time.toISOString(),
          exportedAt: new Date().toISOString(),
          keys: yield* signer.jwks
        })
        const { writer, out } = CarWriter.create([manifest.cid])
        // Each put waits until `out` has been read: the log is read no faster than the client takes the file.
        const put = (value: { readonly cid: CID; readonly bytes: Uint8Array }) => Effect.promise(() => writer.put(value))
        const write = Effect.gen(function*() {
          yield* put(manifest)
          let events = 0
          let entries = 0
          let last: string | null = null
          const after = since._tag === "Position" ? since.position : positionFrom("0")
          for (let from = 1;;) {
            const fetched = yield* seals.sealsAfter(after, from, sealsPerPage)
            // A block sealed before the time holds only events recorded before it.
            const page = fetched.filter((seal) => since._tag !== "Time" || new Date(seal.header.sealedAt) >= since.time)
            yield* seals.withEvents(page, (seal, read) =>
              Effect.gen(function*() {
                const entry = yield* sealEntry(seal, read, workspaceId, since)
                if (entry === undefined) return false
                yield* put(block(entry))
                events += entry.events.length
                entries++
                last = entry.events[entry.events.length - 1]!.position
                return false
              }))
            if (fetched.length < sealsPerPage) break
            from = fetched[fetched.length - 1]!.header.block + 1
          }
          yield* put(block({ kind: "end", events, seals: entries, last }))
          yield* Effect.promise(() => writer.close())
        })
        return Stream.fromAsyncIterable(out, (error) => error).pipe(
          Stream.merge(Stream.fromEffectDrain(write)),
          Stream.orDie
        )
      }))

    return { verify, exportCar, sealPending: seals.sealPending }
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
