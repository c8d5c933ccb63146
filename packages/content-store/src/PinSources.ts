/**
 * Where a pin by CID gets its blocks: the `PinSources` port (`retrieve`: the whole DAG under a CID, every block
 * checked against its CID), the rule a block is checked with (`verifyBlock`: its bytes hash, with the CID's own hash
 * function, to the CID's digest; a block that does not is never handed on), and the adapter over other IPFS
 * gateways' trustless responses (`trustlessGateways`: another Cairn's `/ipfs/<cid>?format=car`, then any block still
 * missing with `?format=raw`; or a Kubo node's RPC, `dag/export` and `block/get`), over `fetch` only, so it runs on
 * Node, Bun and Deno.
 */
import * as dagPb from "@ipld/dag-pb"
import { CarBlockIterator } from "@ipld/car/iterator"
import { UnixFS } from "ipfs-unixfs"
import { Context, Effect, Schema } from "effect"
import { CID } from "multiformats/cid"
import { sha256, sha512 } from "multiformats/hashes/sha2"
import type { Block } from "./ContentStore.ts"

/** Why a DAG could not be retrieved: the job's `failed` reason, said as a client can act on it. */
export class RetrievalFailed extends Schema.TaggedError<RetrievalFailed>()("RetrievalFailed", {
  reason: Schema.String
}) {
  override get message() {
    return this.reason
  }
}

export interface PinSourcesService {
  /** The sources, as configured (for logs). */
  readonly describe: ReadonlyArray<string>
  /**
   * Every block of the DAG under `cid`, root first, each checked against its CID; RetrievalFailed with the reason
   * when a block lies, none of the sources has one, or they cannot be reached. Aborted with the fiber.
   */
  readonly retrieve: (cid: string) => Effect.Effect<ReadonlyArray<Block>, RetrievalFailed>
}

/** The configured sources; none by default (every job then fails saying so). */
export const PinSources = Context.Reference<PinSourcesService>("cairn/PinSources", { defaultValue: () => trustlessGateways([]) })

const sha256Code = 0x12
const sha512Code = 0x13
const identityCode = 0x00
const rawCode = 0x55
const dagPbCode = 0x70

const equalBytes = (a: Uint8Array, b: Uint8Array) => {
  if (a.byteLength !== b.byteLength) return false
  for (let i = 0; i < a.byteLength; i++) if (a[i] !== b[i]) return false
  return true
}

/**
 * Whether `bytes` are the block `cid` names: hashed with the CID's hash function (SHA-256, SHA-512 or identity; with
 * multiformats' hashers: Node's crypto on Node, WebCrypto elsewhere), the digest is the CID's. Undefined when they
 * are; the reason otherwise.
 */
export const verifyBlock = async (cid: CID, bytes: Uint8Array): Promise<string | undefined> => {
  const { code, digest } = cid.multihash
  let actual: Uint8Array
  if (code === identityCode) actual = bytes
  else if (code === sha256Code) actual = (await sha256.digest(bytes)).digest
  else if (code === sha512Code) actual = (await sha512.digest(bytes)).digest
  else return `block ${cid} uses hash function 0x${code.toString(16)}, which this node cannot verify`
  return equalBytes(actual, digest) ? undefined : `block ${cid} does not match its hash: the source sent other bytes`
}

/** The CIDs a block links to: dag-pb links; raw blocks have none. Other codecs are refused (reason). */
const linksOf = (cid: CID, bytes: Uint8Array): ReadonlyArray<CID> | string => {
  if (cid.code === rawCode) return []
  if (cid.code === dagPbCode) {
    try {
      return dagPb.decode(bytes).Links.map((link) => link.Hash)
    } catch {
      return `block ${cid} is not valid dag-pb`
    }
  }
  return `block ${cid} has codec 0x${cid.code.toString(16)}: only dag-pb and raw DAGs (UnixFS) are pinned`
}

export interface TrustlessOptions {
  /** How long one request to a source may take to answer and send its body (60 s by default). */
  readonly requestTimeoutMs?: number
  /** The most bytes of blocks one DAG may hold (they are held in memory until all are checked); 1 GiB by default. */
  readonly maxBytes?: number
}

/**
 * `urls` are gateways serving trustless responses (`/ipfs/<cid>?format=car|raw`), tried in order: the first that
 * answers a CAR gives the blocks it has; any still missing are asked of every source a block at a time.
 */
export function trustlessGateways(urls: ReadonlyArray<string>, options: TrustlessOptions = {}): PinSourcesService {
  const bases = urls.map((url) => url.replace(/\/+$/, ""))
  const timeoutMs = options.requestTimeoutMs ?? 60_000
  const maxBytes = options.maxBytes ?? 1024 * 1024 * 1024
  /**
   * How a source is asked for a CAR or a block: a gateway's trustless GET, or a Kubo node's RPC (a source written
   * `kubo+http://host:5001`: `dag/export` and `block/get`, which Kubo answers from its store or the IPFS network).
   */
  const kubo = (base: string) => base.startsWith("kubo+") ? base.slice("kubo+".length) : undefined
  const urlOf = (base: string, cid: string, format: "car" | "raw") => {
    const rpc = kubo(base)
    return rpc === undefined ? `${base}/ipfs/${cid}?format=${format}` : `${rpc}/api/v0/${format === "car" ? "dag/export" : "block/get"}?arg=${cid}`
  }

  const retrieve = (root: string) =>
    Effect.tryPromise({
      try: async (signal) => {
        if (bases.length === 0) throw new RetrievalFailed({ reason: "no pin source is configured (PIN_SOURCES)" })
        const rootCid = CID.parse(root)
        const found = new Map<string, Uint8Array>()
        const unreachable: Array<string> = []
        const request = (base: string, cid: string, format: "car" | "raw") =>
          fetch(urlOf(base, cid, format), {
            // Kubo's RPC takes POST only.
            method: kubo(base) === undefined ? "GET" : "POST",
            headers: { accept: format === "car" ? "application/vnd.ipld.car" : "application/vnd.ipld.raw" },
            signal: AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)])
          })

        let held = 0
        const take = async (cid: CID, bytes: Uint8Array) => {
          const lie = await verifyBlock(cid, bytes)
          if (lie !== undefined) throw new RetrievalFailed({ reason: lie })
          const key = cid.toString()
          if (found.has(key)) return
          held += bytes.byteLength
          if (held > maxBytes) throw new RetrievalFailed({ reason: `${root} is larger than this node pins (PIN_MAX_BYTES, ${maxBytes} bytes)` })
          found.set(key, bytes)
        }

        // The DAG in one CAR from the first source that has it.
        for (const base of bases) {
          let response: Response
          try {
            response = await request(base, root, "car")
          } catch (cause) {
            if (signal.aborted) throw cause
            unreachable.push(base)
            continue
          }
          if (!response.ok || response.body === null) {
            await response.body?.cancel()
            // Kubo says a block it cannot find with 500: not found there, not out of reach.
            if (response.status >= 500 && kubo(base) === undefined) unreachable.push(base)
            continue
          }
          try {
            const blocks = await CarBlockIterator.fromIterable(response.body as unknown as AsyncIterable<Uint8Array>)
            for await (const block of blocks) await take(block.cid as unknown as CID, block.bytes)
          } catch (cause) {
            if (cause instanceof RetrievalFailed || signal.aborted) throw cause
            // A CAR cut short: what arrived is kept, the rest is asked for block by block.
          }
          break
        }

        // Walk the DAG from the root: every block it links to must be there, asked for one by one when missing.
        const ordered: Array<Block> = []
        const seen = new Set<string>()
        const pending: Array<CID> = [rootCid]
        while (pending.length > 0) {
          const cid = pending.pop()!
          const key = cid.toString()
          if (seen.has(key)) continue
          seen.add(key)
          let bytes = found.get(key)
          if (bytes === undefined && cid.multihash.code === identityCode) bytes = cid.multihash.digest
          if (bytes === undefined) {
            for (const base of bases) {
              let response: Response
              try {
                response = await request(base, key, "raw")
              } catch (cause) {
                if (signal.aborted) throw cause
                if (!unreachable.includes(base)) unreachable.push(base)
                continue
              }
              if (!response.ok) {
                await response.body?.cancel()
                continue
              }
              const got = new Uint8Array(await response.arrayBuffer())
              await take(cid, got)
              bytes = got
              break
            }
          }
          if (bytes === undefined) {
            const where = unreachable.length === bases.length
              ? `no pin source could be reached (${bases.join(", ")})`
              : `no pin source has it (${bases.join(", ")})`
            throw new RetrievalFailed({ reason: key === root ? `${root} not found: ${where}` : `block ${key} of ${root} not found: ${where}` })
          }
          ordered.push({ cid: key, bytes })
          const links = linksOf(cid, bytes)
          if (typeof links === "string") throw new RetrievalFailed({ reason: links })
          for (let i = links.length - 1; i >= 0; i--) pending.push(links[i]!)
        }
        return ordered as ReadonlyArray<Block>
      },
      catch: (cause) =>
        cause instanceof RetrievalFailed
          ? cause
          : new RetrievalFailed({ reason: `retrieval failed: ${cause instanceof Error ? cause.message : String(cause)}` })
    })

  return { describe: bases, retrieve }
}

/** What a pinned DAG is, as a file record counts it: a file (its size) or a folder (its files and their bytes). */
export interface DagSummary {
  readonly kind: "file" | "directory" | "symlink"
  /** Files in a folder (every level, HAMT shards followed); 1 for a file, 0 for a symlink. */
  readonly files: number
  /** Bytes of a file's content, or of a folder's files together. */
  readonly size: number
}

/**
 * Sums up a DAG from its blocks (those `retrieve` gave, all of them there), as `ContentStore.walk` would count the
 * stored folder, without reading it back: UnixFS files (dag-pb or raw) counted with their sizes, folders and HAMT
 * shards followed, symlinks not counted.
 */
export const dagSummary = (root: string, blocks: ReadonlyArray<Block>): DagSummary => {
  const byCid = new Map(blocks.map((block) => [block.cid, block.bytes]))
  const bytesOf = (cid: CID) => cid.multihash.code === identityCode ? cid.multihash.digest : byCid.get(cid.toString())
  const nodeOf = (cid: CID): { readonly kind: DagSummary["kind"]; readonly size: number; readonly links: ReadonlyArray<CID> } => {
    const bytes = bytesOf(cid)
    if (bytes === undefined) return { kind: "file", size: 0, links: [] }
    if (cid.code === rawCode) return { kind: "file", size: bytes.byteLength, links: [] }
    const node = dagPb.decode(bytes)
    const data = node.Data === undefined ? undefined : UnixFS.unmarshal(node.Data)
    const links = node.Links.map((link) => link.Hash)
    if (data === undefined) return { kind: "directory", size: 0, links }
    if (data.type === "directory" || data.type === "hamt-sharded-directory") return { kind: "directory", size: 0, links }
    if (data.type === "symlink") return { kind: "symlink", size: 0, links: [] }
    return { kind: "file", size: Number(data.fileSize()), links: [] }
  }
  const top = nodeOf(CID.parse(root))
  if (top.kind !== "directory") return { kind: top.kind, files: top.kind === "file" ? 1 : 0, size: top.size }
  let files = 0
  let size = 0
  const pending = [...top.links]
  while (pending.length > 0) {
    const node = nodeOf(pending.pop()!)
    if (node.kind === "file") {
      files++
      size += node.size
    } else if (node.kind === "directory") pending.push(...node.links)
  }
  return { kind: "directory", files, size }
}

