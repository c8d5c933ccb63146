/**
 * The tamper-evident log as its users reach it (docs/audit-proofs.md): `verify`, the whole log checked against its
 * seals, and `exportCar`, a workspace's sealed events with their proofs as a CAR that a third party checks offline
 * (`examples/verify-audit-export`). The export reads the log block by block as it was sealed, so a block's events
 * come with their leaf indexes, and other workspaces' events appear only as hashes among the leaves.
 */
import { TokenSigner } from "@cairn/auth"
import { Audit } from "@cairn/domain"
import { compare, EventStore } from "@cairn/event-store"
import { CarWriter } from "@ipld/car"
import { Context, Effect, Layer, Stream } from "effect"
import { CID } from "multiformats/cid"
import * as Digest from "multiformats/hashes/digest"
import type { Point } from "../agents/AgentsAt.ts"
import * as EventOwners from "./EventOwners.ts"
import * as LogProof from "./LogProof.ts"
import { type ExportRow, exportRowPosition, LogSeals, positionFrom, type Seal } from "./LogSeals.ts"
import * as LogVerify from "./LogVerify.ts"

/** Where an export starts: after a log position, or after a time (events recorded later): `?at=`'s points. */
export type Since = Point

/** The streams of rows whose data names no workspace: their workspace is their stream's. */
const unnamed = (rows: ReadonlyArray<ExportRow>) => {
  const streams = new Set<string>()
  for (const row of rows) if (row.workspace_id === null) streams.add(row.stream_id)
  return streams
}

const isAfter = (row: ExportRow, since: Since) =>
  since._tag === "Time"
    ? row.recorded_at > since.time
    : compare(exportRowPosition(row), since.position) > 0

/** The multicodec of plain JSON blocks. */
const jsonCodec = 0x0200
const encoder = new TextEncoder()

/** A block of the CAR holding the JSON `bytes`. */
const blockOf = (bytes: Uint8Array) => ({ cid: CID.createV1(jsonCodec, Digest.create(0x12, LogProof.sha256(bytes))), bytes })

const block = (value: unknown) => blockOf(encoder.encode(JSON.stringify(value)))

const decoder = new TextDecoder()

/**
 * An event as an export carries it: its JSON as the database wrote it, after its leaf index and the hash it chains
 * from (the checker parses it to the values the sealer hashed: the store's reader parses the same JSON). Data holding
 * a sealed value is shown without its ciphertext, and then by its hash: that event's whole JSON, written again.
 */
const redacted = (row: ExportRow, index: number, prev: string): Uint8Array | undefined => {
  if (!row.sealed) return undefined
  const event = JSON.parse(decoder.decode(row.json)) as { readonly data: unknown }
  const shown = Audit.shownData(event.data)
  if (JSON.stringify(shown) === JSON.stringify(event.data)) return undefined
  return encoder.encode(JSON.stringify({ index, prev, ...event, data: shown, redacted: true, dataHash: LogProof.dataHash(event.data) }))
}

/**
 * A seal entry's JSON, written once into one buffer: `head`, then each event's `{"index":…,"prev":"…",` and its
 * JSON without its opening brace (or the whole redacted event), separated by commas, then `]}`.
 */
const entryBytes = (head: string, events: ReadonlyArray<{ readonly prefix: string; readonly json: Uint8Array; readonly whole: Uint8Array | undefined }>) => {
  const headBytes = encoder.encode(head)
  let size = headBytes.length + 2 + Math.max(0, events.length - 1)
  for (const event of events) size += event.whole !== undefined ? event.whole.length : event.prefix.length + event.json.length - 1
  const bytes = new Uint8Array(size)
  bytes.set(headBytes, 0)
  let offset = headBytes.length
  for (let i = 0; i < events.length; i++) {
    const event = events[i]!
    if (i > 0) bytes[offset++] = 0x2c // ,
    if (event.whole !== undefined) {
      bytes.set(event.whole, offset)
      offset += event.whole.length
      continue
    }
    // The prefix is ASCII (digits and hex): a byte per character.
    for (let k = 0; k < event.prefix.length; k++) bytes[offset++] = event.prefix.charCodeAt(k)
    bytes.set(event.json.subarray(1), offset)
    offset += event.json.length - 1
  }
  bytes[offset++] = 0x5d // ]
  bytes[offset++] = 0x7d // }
  return bytes
}

const sealsPerPage = 50
const zeroHex = LogProof.toHex(LogProof.ZERO)

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

    /**
     * The workspace's events in one block (as read) after `since`, with their leaf indexes, as the export's seal
     * entry (its JSON's bytes), and how many and the last position; none when the block holds none of them.
     */
    const sealEntry = (seal: Seal, rows: ReadonlyArray<ExportRow>, workspaceId: string, since: Since) =>
      Effect.map(owners.ownersOf(unnamed(rows)), (ownerOf) => {
        const events: Array<{ readonly prefix: string; readonly json: Uint8Array; readonly whole: Uint8Array | undefined }> = []
        let last: ExportRow | undefined
        for (let index = 0; index < rows.length; index++) {
          const row = rows[index]!
          if ((row.workspace_id ?? ownerOf.get(row.stream_id)) !== workspaceId || !isAfter(row, since)) continue
          const prev = seal.prevsHex.slice(64 * index, 64 * index + 64) || zeroHex
          events.push({ prefix: `{"index":${index},"prev":"${prev}",`, json: row.json, whole: redacted(row, index, prev) })
          last = row
        }
        if (last === undefined) return undefined
        const leaves = Array.from({ length: seal.leavesHex.length / 64 }, (_, i) => `"${seal.leavesHex.slice(64 * i, 64 * i + 64)}"`)
        const head = `{"kind":"seal","block":${seal.header.block},"header":${JSON.stringify(seal.header)},` +
          `"signature":${JSON.stringify(seal.signature)},"leaves":[${leaves.join(",")}],"events":[`
        return { bytes: entryBytes(head, events), events: events.length, last: `${last.transaction_id}:${last.global_position}` }
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
            yield* seals.withExportRows(page, (seal, rows) =>
              Effect.gen(function*() {
                const entry = yield* sealEntry(seal, rows, workspaceId, since)
                if (entry === undefined) return false
                yield* put(blockOf(entry.bytes))
                events += entry.events
                entries++
                last = entry.last
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
