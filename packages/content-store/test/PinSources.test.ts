/**
 * The trustless-gateway pin source against stand-in sources on loopback: a gateway (GET `/ipfs/<cid>?format=car|raw`)
 * and a Kubo RPC (POST `/api/v0/dag/export` and `/api/v0/block/get`, GET refused as Kubo refuses it), a CAR that
 * lacks a block (asked for on its own), one that lies, and sources tried in order.
 */
import { trustlessGateways } from "@cairn/content-store"
import { assert, describe, it } from "@effect/vitest"
import { CarWriter } from "@ipld/car"
import * as dagPb from "@ipld/dag-pb"
import { Effect } from "effect"
import { UnixFS } from "ipfs-unixfs"
import { CID } from "multiformats/cid"
import * as raw from "multiformats/codecs/raw"
import { sha256 } from "multiformats/hashes/sha2"
import * as http from "node:http"
import type { AddressInfo } from "node:net"

interface Block {
  readonly cid: CID
  readonly bytes: Uint8Array
}

const rawBlock = async (text: string): Promise<Block> => {
  const bytes = new TextEncoder().encode(text)
  return { cid: CID.create(1, raw.code, await sha256.digest(bytes)), bytes }
}

/** A two-leaf UnixFS file: its root and its leaves. */
const file = async () => {
  const leaves = [await rawBlock("first half, "), await rawBlock("second half")]
  const data = new UnixFS({ type: "file", blockSizes: leaves.map((leaf) => BigInt(leaf.bytes.byteLength)) })
  const bytes = dagPb.encode({ Data: data.marshal(), Links: leaves.map((leaf) => ({ Hash: leaf.cid, Tsize: leaf.bytes.byteLength })) })
  return { root: { cid: CID.create(1, dagPb.code, await sha256.digest(bytes)), bytes }, leaves }
}

const carOf = async (root: CID, blocks: ReadonlyArray<Block>) => {
  const { writer, out } = CarWriter.create([root])
  const chunks: Array<Uint8Array> = []
  const reading = (async () => {
    for await (const chunk of out) chunks.push(chunk)
  })()
  for (const block of blocks) await writer.put(block)
  await writer.close()
  await reading
  return Buffer.concat(chunks)
}

/** A stand-in source: `answer(kind, cid)` gives the bytes, or undefined for 404 (500 on the Kubo paths, as Kubo says). */
const standIn = async (answer: (kind: "car" | "raw", cid: string) => Promise<Uint8Array | undefined>, style: "gateway" | "kubo") => {
  const asked: Array<string> = []
  const server = http.createServer((request, response) => {
    const url = new URL(request.url!, "http://source")
    let kind: "car" | "raw" | undefined
    let cid = ""
    if (style === "gateway" && request.method === "GET" && url.pathname.startsWith("/ipfs/")) {
      kind = url.searchParams.get("format") === "car" ? "car" : "raw"
      cid = url.pathname.slice("/ipfs/".length)
    }
    if (style === "kubo" && request.method === "POST" && (url.pathname === "/api/v0/dag/export" || url.pathname === "/api/v0/block/get")) {
      kind = url.pathname.endsWith("dag/export") ? "car" : "raw"
      cid = url.searchParams.get("arg") ?? ""
    }
    if (kind === undefined) return void response.writeHead(405).end()
    asked.push(`${kind} ${cid}`)
    void answer(kind, cid).then((bytes) =>
      bytes === undefined ? response.writeHead(style === "kubo" ? 500 : 404).end() : response.writeHead(200).end(bytes))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, asked, close: () => server.close() }
}

describe("the trustless-gateway pin source", () => {
  it.effect("retrieves a DAG from a gateway's CAR, root first, every block checked", () =>
    Effect.gen(function*() {
      const { root, leaves } = yield* Effect.promise(file)
      const source = yield* Effect.promise(() => standIn((kind) => kind === "car" ? carOf(root.cid, [root, ...leaves]) : Promise.resolve(undefined), "gateway"))
      const blocks = yield* trustlessGateways([source.url]).retrieve(root.cid.toString())
      source.close()
      assert.deepStrictEqual(blocks.map((block) => block.cid), [root.cid, ...leaves.map((leaf) => leaf.cid)].map(String))
      assert.deepStrictEqual(source.asked, [`car ${root.cid}`])
    }))

  it.effect("asks for a block the CAR lacks on its own (?format=raw)", () =>
    Effect.gen(function*() {
      const { root, leaves } = yield* Effect.promise(file)
      const source = yield* Effect.promise(() =>
        standIn((kind, cid) =>
          kind === "car" ? carOf(root.cid, [root, leaves[0]!]) : Promise.resolve(cid === leaves[1]!.cid.toString() ? leaves[1]!.bytes : undefined), "gateway"))
      const blocks = yield* trustlessGateways([source.url]).retrieve(root.cid.toString())
      source.close()
      assert.strictEqual(blocks.length, 3)
      assert.deepStrictEqual(source.asked, [`car ${root.cid}`, `raw ${leaves[1]!.cid}`])
    }))

  it.effect("retrieves from a Kubo RPC (kubo+http://…): POST dag/export", () =>
    Effect.gen(function*() {
      const { root, leaves } = yield* Effect.promise(file)
      const source = yield* Effect.promise(() => standIn((kind) => kind === "car" ? carOf(root.cid, [root, ...leaves]) : Promise.resolve(undefined), "kubo"))
      const blocks = yield* trustlessGateways([`kubo+${source.url}`]).retrieve(root.cid.toString())
      source.close()
      assert.strictEqual(blocks.length, 3)
      assert.deepStrictEqual(source.asked, [`car ${root.cid}`])
    }))

  it.effect("fails, saying which block, when a source's bytes do not hash to the CID; tries the sources in order", () =>
    Effect.gen(function*() {
      const { root, leaves } = yield* Effect.promise(file)
      const empty = yield* Effect.promise(() => standIn(() => Promise.resolve(undefined), "gateway"))
      const liar = yield* Effect.promise(() =>
        standIn((kind) => kind === "car" ? carOf(root.cid, [root, { cid: leaves[0]!.cid, bytes: new TextEncoder().encode("forged") }, leaves[1]!]) : Promise.resolve(undefined), "gateway"))
      const failure = yield* Effect.flip(trustlessGateways([empty.url, liar.url]).retrieve(root.cid.toString()))
      empty.close()
      liar.close()
      assert.strictEqual(failure.reason, `block ${leaves[0]!.cid} does not match its hash: the source sent other bytes`)
      assert.deepStrictEqual(empty.asked, [`car ${root.cid}`])
    }))

  it.effect("fails a CID no source has, and one no source can be reached for, saying which", () =>
    Effect.gen(function*() {
      const { root } = yield* Effect.promise(file)
      const empty = yield* Effect.promise(() => standIn(() => Promise.resolve(undefined), "gateway"))
      const missing = yield* Effect.flip(trustlessGateways([empty.url]).retrieve(root.cid.toString()))
      empty.close()
      assert.strictEqual(missing.reason, `${root.cid} not found: no pin source has it (${empty.url})`)
      const closed = yield* Effect.flip(trustlessGateways([empty.url]).retrieve(root.cid.toString()))
      assert.strictEqual(closed.reason, `${root.cid} not found: no pin source could be reached (${empty.url})`)
      const none = yield* Effect.flip(trustlessGateways([]).retrieve(root.cid.toString()))
      assert.strictEqual(none.reason, "no pin source is configured (PIN_SOURCES)")
    }))

  it.effect("fails a DAG larger than the bytes it may hold (PIN_MAX_BYTES)", () =>
    Effect.gen(function*() {
      const { root, leaves } = yield* Effect.promise(file)
      const source = yield* Effect.promise(() => standIn((kind) => kind === "car" ? carOf(root.cid, [root, ...leaves]) : Promise.resolve(undefined), "gateway"))
      const failure = yield* Effect.flip(trustlessGateways([source.url], { maxBytes: root.bytes.byteLength + leaves[0]!.bytes.byteLength }).retrieve(root.cid.toString()))
      source.close()
      assert.strictEqual(failure.reason, `${root.cid} is larger than this node pins (PIN_MAX_BYTES, ${root.bytes.byteLength + leaves[0]!.bytes.byteLength} bytes)`)
    }))
})
