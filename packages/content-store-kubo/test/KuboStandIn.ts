/**
 * A stand-in for the part of Kubo's RPC API that KuboSnapshotStore calls, on a loopback port and backed by a
 * MemoryBlockstore, answering in Kubo's shapes (core/commands/block.go, pin/pin.go, repo.go): `block/put` (one
 * multipart call, one JSON line per file part, CIDv1 of the `cid-codec`), `block/get`, `block/stat`, `pin/add`
 * (recursive and named; a missing block fails it as Kubo offline does), `pin/ls` (`Keys`, with `Name` when `names`
 * is set), `pin/rm`, and `repo/gc` (removes every block no recursive pin reaches, one `{"Key":{"/":…}}` line each).
 * Anything else gets Kubo's plain `404 page not found`. It records each call, so tests can check what was sent.
 */
import * as dagPb from "@ipld/dag-pb"
import { MemoryBlockstore } from "blockstore-core"
import { Effect } from "effect"
import { base32 } from "multiformats/bases/base32"
import { CID } from "multiformats/cid"
import * as raw from "multiformats/codecs/raw"
import { sha256 } from "multiformats/hashes/sha2"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"

export interface Call {
  readonly command: string
  readonly params: URLSearchParams
  /** The file parts of a multipart body. */
  readonly parts: ReadonlyArray<Uint8Array>
}

export interface KuboStandIn {
  readonly url: string
  readonly calls: Array<Call>
  readonly blocks: MemoryBlockstore
  /** Recursive pins: CID → name. */
  readonly pins: Map<string, string>
}

const codecs: Record<string, number> = { raw: raw.code, "dag-pb": dagPb.code }

const body = (request: IncomingMessage) =>
  new Promise<Buffer>((resolve, reject) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk)).on("end", () => resolve(Buffer.concat(chunks))).on("error", reject)
  })

/** The file parts of a multipart body, split by hand (latin1 keeps every byte as it is). */
const partsOf = (contentType: string | undefined, bytes: Buffer): ReadonlyArray<Uint8Array> => {
  const boundary = /boundary=(.+)$/.exec(contentType ?? "")?.[1]
  if (boundary === undefined) return []
  return bytes.toString("latin1").split(`--${boundary}`).slice(1, -1).map((part) => {
    const content = part.slice(part.indexOf("\r\n\r\n") + 4, -2)
    return new Uint8Array(Buffer.from(content, "latin1"))
  })
}

const blockBytes = async (blocks: MemoryBlockstore, cid: CID) => {
  const pieces: Array<Uint8Array> = []
  for await (const piece of blocks.get(cid)) pieces.push(piece)
  return Buffer.concat(pieces)
}

/** Every block under `root`; a missing one throws, with Kubo's offline message. */
const dagOf = async (blocks: MemoryBlockstore, root: CID) => {
  const reached = new Set<string>()
  const pending = [root]
  for (let cid = pending.pop(); cid !== undefined; cid = pending.pop()) {
    const key = base32.encode(cid.multihash.bytes)
    if (reached.has(key)) continue
    if (!(await blocks.has(cid))) throw new Error(`block was not found locally (offline): ipld: could not find ${cid}`)
    reached.add(key)
    if (cid.code === dagPb.code) pending.push(...dagPb.decode(await blockBytes(blocks, cid)).Links.map((link) => link.Hash))
  }
  return reached
}

type Answer = { readonly status: number; readonly json?: unknown; readonly text?: string; readonly bytes?: Uint8Array }
const error = (message: string): Answer => ({ status: 500, json: { Message: message, Code: 0, Type: "error" } })
const notFound = (cid: string) => error(`block was not found locally (offline): ipld: could not find ${cid}`)

const answer = async (kubo: KuboStandIn, call: Call): Promise<Answer> => {
  const { blocks, pins } = kubo
  const arg = call.params.get("arg") ?? ""
  const parsed = () => CID.parse(arg)
  switch (call.command) {
    case "block/put": {
      const code = codecs[call.params.get("cid-codec") ?? ""]
      if (code === undefined || call.params.get("mhtype") !== "sha2-256") return error("unsupported codec or hash")
      const lines = []
      for (const part of call.parts) {
        const cid = CID.createV1(code, await sha256.digest(part))
        await blocks.put(cid, part)
        lines.push(JSON.stringify({ Key: cid.toString(), Size: part.length }))
      }
      return { status: 200, text: lines.map((line) => `${line}\n`).join("") }
    }
    case "block/get":
    case "block/stat": {
      const cid = parsed()
      if (!(await blocks.has(cid))) return notFound(arg)
      const bytes = await blockBytes(blocks, cid)
      return call.command === "block/get" ? { status: 200, bytes } : { status: 200, json: { Key: arg, Size: bytes.length } }
    }
    case "pin/add": {
      const cid = parsed()
      try {
        await dagOf(blocks, cid)
      } catch (cause) {
        return error(String((cause as Error).message))
      }
      pins.set(cid.toString(), call.params.get("name") ?? "")
      return { status: 200, json: { Pins: [cid.toString()] } }
    }
    case "pin/ls": {
      const names = call.params.get("names") === "true"
      const keys = Object.fromEntries([...pins].map(([cid, name]) => [cid, names ? { Type: "recursive", Name: name } : { Type: "recursive" }]))
      return { status: 200, json: { Keys: keys } }
    }
    case "pin/rm": {
      if (!pins.delete(arg)) return error("not pinned or pinned indirectly")
      return { status: 200, json: { Pins: [arg] } }
    }
    case "repo/gc": {
      const kept = new Set<string>()
      for (const root of pins.keys()) for (const key of await dagOf(blocks, CID.parse(root))) kept.add(key)
      const removed: Array<CID> = []
      for await (const { cid } of blocks.getAll()) if (!kept.has(base32.encode(cid.multihash.bytes))) removed.push(cid)
      for (const cid of removed) await blocks.delete(cid)
      return { status: 200, text: removed.map((cid) => `${JSON.stringify({ Key: { "/": cid.toString() } })}\n`).join("") }
    }
    default:
      return { status: 404, text: "404 page not found" }
  }
}

const reply = (response: ServerResponse, { status, json, text, bytes }: Answer) => {
  if (json !== undefined) {
    response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(json))
  } else if (bytes !== undefined) {
    response.writeHead(status, { "content-type": "application/octet-stream" }).end(bytes)
  } else {
    response.writeHead(status, { "content-type": "text/plain" }).end(text ?? "")
  }
}

/** A stand-in Kubo on a loopback port, for the scope. */
export const kuboStandIn = Effect.acquireRelease(
  Effect.callback<KuboStandIn & { readonly close: () => void }>((resume) => {
    const kubo = { url: "", calls: [] as Array<Call>, blocks: new MemoryBlockstore(), pins: new Map<string, string>() }
    const server = createServer(async (request, response) => {
      const url = new URL(request.url!, "http://kubo")
      const call = {
        command: url.pathname.replace("/api/v0/", ""),
        params: url.searchParams,
        parts: partsOf(request.headers["content-type"], await body(request))
      }
      kubo.calls.push(call)
      reply(response, request.method === "POST" ? await answer(kubo, call) : { status: 405, text: "405 - Method Not Allowed" })
    }).listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      resume(Effect.succeed({ ...kubo, url: `http://127.0.0.1:${port}`, close: () => server.close() }))
    })
  }),
  (kubo) => Effect.sync(kubo.close)
)
