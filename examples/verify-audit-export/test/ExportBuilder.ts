/**
 * A stand-in for Cairn's sealer and `GET /v0/audit/export`, written from docs/audit-proofs.md alone: it seals a log
 * into signed blocks and writes a workspace's export as a CAR, with hooks that let a test make the "server" lie
 * (a wrong prev, a header it signs anyway, blocks in another order) or tamper with the result afterwards.
 */
import { CarWriter } from "@ipld/car/writer"
import { calculateJwkThumbprint, CompactSign, exportJWK, generateKeyPair, type JWK } from "jose"
import { CID } from "multiformats/cid"
import { sha256 as sha256Hasher } from "multiformats/hashes/sha2"
import { createHash } from "node:crypto"

export interface LogEvent {
  readonly workspace: string
  readonly position: string
  readonly stream: string
  readonly version: number
  readonly eventId: string
  readonly type: string
  readonly data: unknown
  readonly metadata: unknown
  readonly recordedAt: string
}

export interface Signer {
  readonly kid: string
  readonly jwk: JWK
  readonly privateKey: Awaited<ReturnType<typeof generateKeyPair>>["privateKey"]
}

export interface Header {
  v: number
  block: number
  prev: string
  after: string
  last: string
  count: number
  root: string
  sealedAt: string
}

export interface SealedEvent {
  readonly event: LogEvent
  readonly index: number
  readonly prev: string
  readonly hash: string
}

export interface Block {
  readonly header: Header
  readonly signature: string
  readonly leaves: Array<string>
  readonly events: ReadonlyArray<SealedEvent>
}

const ZERO_HEX = "0".repeat(64)
const sha256 = (...parts: ReadonlyArray<Uint8Array | string>) => {
  const hash = createHash("sha256")
  for (const part of parts) hash.update(part)
  return hash.digest()
}

export const makeSigner = async (): Promise<Signer> => {
  const { privateKey, publicKey } = await generateKeyPair("ES256", { extractable: true })
  const jwk = await exportJWK(publicKey)
  const kid = await calculateJwkThumbprint(jwk)
  return { kid, privateKey, jwk: { ...jwk, kid, alg: "ES256", use: "sig" } }
}

export const jwksOf = (...signers: ReadonlyArray<Signer>) => ({ keys: signers.map((signer) => signer.jwk) })

/** dataHash(e): the hash of the data as recorded, which stands for it in the event's hash. */
export const hashData = (data: unknown) => createHash("sha256").update(JSON.stringify(data)).digest("hex")

/** What the export shows of data holding a sealed value (the server's `Audit.shownData`): that value left out. */
const sealedLeftOut = (data: unknown) => {
  if (typeof data !== "object" || data === null || !("sealed" in data)) return undefined
  const { sealed: _, ...shown } = data as Record<string, unknown>
  return shown
}

/** "An event's hash": sha256(prev || utf8(canonical(e))). */
export const hashEvent = (prevHex: string, event: LogEvent): string => {
  const [transactionId, globalPosition] = event.position.split(":")
  const dataHash = hashData(event.data)
  const canonical = JSON.stringify([
    "cairn-event/1", transactionId, globalPosition, event.stream, event.version, event.eventId, event.type,
    dataHash, event.metadata, event.recordedAt
  ])
  return sha256(Buffer.from(prevHex, "hex"), canonical).toString("hex")
}

/** merkle(hashes): pairs as sha256(0x01 || l || r), an odd last one carried up. */
export const merkleRoot = (leaves: ReadonlyArray<string>): string => {
  let level: Array<Buffer> = leaves.map((leaf) => Buffer.from(leaf, "hex"))
  while (level.length > 1) {
    const next: Array<Buffer> = []
    for (let i = 0; i < level.length; i += 2) {
      next.push(i + 1 < level.length ? sha256(Buffer.from([1]), level[i]!, level[i + 1]!) : level[i]!)
    }
    level = next
  }
  return level[0]!.toString("hex")
}

export const signHeader = (headerText: string, signer: Signer) =>
  new CompactSign(new TextEncoder().encode(headerText))
    .setProtectedHeader({ alg: "ES256", kid: signer.kid, typ: "cairn-seal" })
    .sign(signer.privateKey)

export interface SealOptions {
  /** The hash an event chains from, as a lying sealer would have it. */
  readonly prevOf?: (event: LogEvent, honest: string) => string
  /** The header a lying sealer signs. */
  readonly header?: (header: Header) => Header
}

/** "A block (a seal)": the log, in the order given, sealed in blocks of `sizes` events. */
export const seal = async (
  log: ReadonlyArray<LogEvent>,
  sizes: ReadonlyArray<number>,
  signer: Signer,
  options: SealOptions = {}
): Promise<Array<Block>> => {
  const heads = new Map<string, string>()
  const blocks: Array<Block> = []
  let prevBlockHash = ZERO_HEX
  let after = "0"
  let start = 0
  for (const [i, size] of sizes.entries()) {
    const events = log.slice(start, start + size).map((event, index): SealedEvent => {
      const honest = heads.get(event.stream) ?? ZERO_HEX
      const prev = options.prevOf?.(event, honest) ?? honest
      const hash = hashEvent(prev, event)
      heads.set(event.stream, hash)
      return { event, index, prev, hash }
    })
    start += size
    const leaves = events.map((event) => event.hash)
    const honest: Header = {
      v: 1,
      block: i + 1,
      prev: prevBlockHash,
      after,
      last: events.at(-1)!.event.position,
      count: leaves.length,
      root: merkleRoot(leaves),
      sealedAt: new Date(Date.UTC(2026, 10, 1, 0, 0, i)).toISOString()
    }
    const header = options.header?.(honest) ?? honest
    const headerText = JSON.stringify(header)
    blocks.push({ header, signature: await signHeader(headerText, signer), leaves, events })
    prevBlockHash = sha256(headerText).toString("hex")
    after = header.last
  }
  return blocks
}

const positionKey = (position: string) => {
  const [tx, gp] = position === "0" ? ["0", "0"] : position.split(":")
  return [BigInt(tx!), BigInt(gp!)] as const
}
export const isAfter = (position: string, since: string) => {
  const [a, b] = [positionKey(position), positionKey(since)]
  return a[0] > b[0] || (a[0] === b[0] && a[1] > b[1])
}

/** "The export": the manifest, a seal for every block holding one of the workspace's events after `since`, the end. */
export const exportOf = (
  blocks: ReadonlyArray<Block>,
  options: { readonly workspace: string; readonly since?: string; readonly keys: unknown }
): Array<any> => {
  const since = options.since ?? "0"
  const seals = blocks.flatMap((block) => {
    const events = block.events.filter(({ event }) => event.workspace === options.workspace && isAfter(event.position, since))
    return events.length === 0 ? [] : [{
      kind: "seal",
      block: block.header.block,
      header: block.header,
      signature: block.signature,
      leaves: block.leaves,
      events: events.map(({ event, index, prev }) => ({
        index,
        prev,
        position: event.position,
        stream: event.stream,
        version: event.version,
        eventId: event.eventId,
        type: event.type,
        ...(sealedLeftOut(event.data) === undefined
          ? { data: event.data }
          : { data: sealedLeftOut(event.data), redacted: true, dataHash: hashData(event.data) }),
        metadata: event.metadata,
        recordedAt: event.recordedAt
      }))
    }]
  })
  const events = seals.flatMap((seal) => seal.events)
  return [
    {
      format: "cairn-audit-export/1",
      workspaceId: options.workspace,
      since,
      exportedAt: "2026-11-28T12:00:00.000Z",
      keys: options.keys
    },
    ...seals,
    { kind: "end", events: events.length, seals: seals.length, last: events.at(-1)?.position ?? null }
  ]
}

export interface CarBlock {
  cid: CID
  bytes: Uint8Array
}

/** Each value as a JSON block addressed by its SHA-256 (CIDv1, codec json 0x0200). */
export const encodeBlocks = (values: ReadonlyArray<unknown>): Promise<Array<CarBlock>> =>
  Promise.all(values.map(async (value) => {
    const bytes = new TextEncoder().encode(JSON.stringify(value))
    return { cid: CID.create(1, 0x0200, await sha256Hasher.digest(bytes)), bytes }
  }))

/** A CAR v1 whose only root is the first block (unless `root` says otherwise). */
export const writeCar = async (blocks: ReadonlyArray<CarBlock>, root: CID = blocks[0]!.cid): Promise<Buffer> => {
  const { writer, out } = CarWriter.create([root])
  const chunks: Array<Uint8Array> = []
  const collected = (async () => {
    for await (const chunk of out) chunks.push(chunk)
  })()
  for (const block of blocks) await writer.put(block)
  await writer.close()
  await collected
  return Buffer.concat(chunks)
}
