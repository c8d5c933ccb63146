/**
 * Kubo's blocks as the block store HeliaSnapshotStore's tree code works on: `block/get`, `block/stat` and
 * `block/put` of one node's RPC API. Reads are offline, so a block the node lacks fails at once (as the
 * NotFoundError blockstores throw) instead of being searched for on the network. A batch of blocks goes in one
 * `block/put` per codec (Kubo stores every file part of the call), unpinned: snapshot roots are pinned when garbage
 * is collected. The tree code is Promise-based, so each command runs as its own promise, stopped by the caller's
 * signal.
 */
import { ContentStoreUnavailable } from "@cairn/content-store"
import type { HeliaSnapshotStore } from "@cairn/content-store-helia"
import * as dagPb from "@ipld/dag-pb"
import { Effect, Schema } from "effect"
import { HttpClientRequest } from "effect/http"
import { equals } from "multiformats/bytes"
import { CID } from "multiformats/cid"
import * as raw from "multiformats/codecs/raw"
import { type KuboRefused, type KuboRpc, meansNotFound } from "./KuboRpc.ts"

/** A block the node does not hold, named as blockstores name the error, so the exporter and tree code see it alike. */
class BlockNotFound extends Error {
  override readonly name = "NotFoundError"
  readonly _tag = "BlockNotFound"
}

const codecNames = new Map([[raw.code, "raw"], [dagPb.code, "dag-pb"]])

const BlockStat = Schema.fromJsonString(Schema.Struct({ Key: Schema.String, Size: Schema.Number }))

interface Options {
  readonly signal?: AbortSignal | undefined
}

type Bytes = Uint8Array | Iterable<Uint8Array> | AsyncIterable<Uint8Array>

const bytesOf = async (value: Bytes): Promise<Uint8Array> => {
  if (value instanceof Uint8Array) return value
  const pieces: Array<Uint8Array> = []
  for await (const piece of value) pieces.push(piece)
  return Buffer.concat(pieces)
}

/** Blocks as `multipart/form-data`, one file part each: how Kubo's `block/put` takes several in one call. */
const multipart = (blocks: ReadonlyArray<{ readonly cid: CID; readonly bytes: Uint8Array }>, boundary: string) => {
  const encoder = new TextEncoder()
  const chunks = blocks.flatMap(({ cid, bytes }) => [
    encoder.encode(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${cid}"\r\nContent-Type: application/octet-stream\r\n\r\n`
    ),
    bytes,
    encoder.encode("\r\n")
  ])
  return Buffer.concat([...chunks, encoder.encode(`--${boundary}--\r\n`)])
}

export const makeKuboBlockstore = (rpc: KuboRpc): Pick<HeliaSnapshotStore.Backend, "blockstore" | "blockSize"> => {
  const run = <A>(effect: Effect.Effect<A, ContentStoreUnavailable | KuboRefused | BlockNotFound>, options?: Options) =>
    Effect.runPromise(
      effect.pipe(Effect.catchTag("KuboRefused", (refused) =>
        Effect.fail(new ContentStoreUnavailable({ operation: "block", cause: refused }))
      )),
      options?.signal === undefined ? undefined : { signal: options.signal }
    )

  /** Runs a read command on a block, offline; a refusal that says the block is missing is BlockNotFound. */
  const read = (command: string, cid: CID) =>
    rpc.post(command, { arg: cid.toString(), offline: "true" }).pipe(
      Effect.catchTag("KuboRefused", (refused): Effect.Effect<never, BlockNotFound | KuboRefused> =>
        meansNotFound(refused) ? Effect.fail(new BlockNotFound(`${cid} is not stored`)) : Effect.fail(refused)
      )
    )

  const stat = (cid: CID) =>
    read("block/stat", cid).pipe(
      Effect.flatMap((response) => rpc.text("block/stat", response)),
      Effect.flatMap((text) =>
        Effect.mapError(Schema.decodeUnknownEffect(BlockStat)(text), (cause) => new ContentStoreUnavailable({ operation: "block/stat", cause }))
      )
    )

  /** Stores blocks of one codec in one call, and checks Kubo named each as the tree code did. */
  const putBlocks = (codec: string, blocks: ReadonlyArray<{ readonly cid: CID; readonly bytes: Uint8Array }>) => {
    const boundary = `cairn-${crypto.randomUUID()}`
    const params = { "cid-codec": codec, mhtype: "sha2-256", pin: "false", "allow-big-block": "true" }
    return rpc.post(
      "block/put",
      params,
      HttpClientRequest.bodyUint8Array(multipart(blocks, boundary), `multipart/form-data; boundary=${boundary}`)
    ).pipe(
      Effect.flatMap((response) => rpc.text("block/put", response)),
      Effect.flatMap((text) =>
        Effect.try({
          try: () => {
            const stored = text.trim().split("\n").filter((line) => line !== "").map((line) => CID.parse(JSON.parse(line).Key))
            const missed = blocks.filter(({ cid }) => !stored.some((key) => equals(key.multihash.bytes, cid.multihash.bytes)))
            if (missed.length > 0) throw new Error(`Kubo did not store ${missed.map(({ cid }) => cid).join(", ")}`)
          },
          catch: (cause) => new ContentStoreUnavailable({ operation: "block/put", cause })
        })
      )
    )
  }

  const putMany = async function*(source: Iterable<{ cid: CID; bytes: Bytes }> | AsyncIterable<{ cid: CID; bytes: Bytes }>, options?: Options) {
    const byCodec = new Map<string, Array<{ readonly cid: CID; readonly bytes: Uint8Array }>>()
    for await (const { cid, bytes } of source) {
      const codec = codecNames.get(cid.code)
      if (codec === undefined) throw new ContentStoreUnavailable({ operation: "block/put", cause: new Error(`no codec for ${cid}`) })
      byCodec.set(codec, [...byCodec.get(codec) ?? [], { cid, bytes: await bytesOf(bytes) }])
    }
    for (const [codec, blocks] of byCodec) {
      await run(putBlocks(codec, blocks), options)
      yield* blocks.map(({ cid }) => cid)
    }
  }

  return {
    blockstore: {
      get: async function*(cid: CID, options?: Options) {
        const response = await run(read("block/get", cid), options)
        yield new Uint8Array(await run(Effect.mapError(response.arrayBuffer, (cause) => new ContentStoreUnavailable({ operation: "block/get", cause })), options))
      },
      has: (cid: CID, options?: Options) =>
        run(stat(cid).pipe(Effect.as(true), Effect.catchTag("BlockNotFound", () => Effect.succeed(false))), options),
      put: async (cid: CID, bytes: Bytes, options?: Options) => {
        for await (const _ of putMany([{ cid, bytes }], options)) { /* drain */ }
        return cid
      },
      putMany
    },
    blockSize: (cid, options) =>
      run(stat(cid).pipe(
        Effect.map((stat): number | undefined => stat.Size),
        Effect.catchTag("BlockNotFound", () => Effect.succeed(undefined))
      ), options)
  }
}
