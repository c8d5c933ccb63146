import { kuboVectors } from "@cairn/content-store/testing"
import { assert, describe, it } from "@effect/vitest"
import * as dagPb from "@ipld/dag-pb"
import { UnixFS } from "ipfs-unixfs"
import { CID } from "multiformats/cid"
import * as raw from "multiformats/codecs/raw"
import { sha256 } from "multiformats/hashes/sha2"

const chunkSize = 1_048_576

/**
 * A file's CID worked out by hand from the UnixFS spec, the way Kubo lays a file out: 1 MiB leaves (raw blocks for
 * CIDv1, dag-pb file nodes for CIDv0) and, for more than one leaf, a dag-pb file node linking them all. The files
 * here have far fewer than 1024 leaves, so that one node is the whole balanced tree.
 */
const cidByHand = async (content: Uint8Array, cidVersion: 0 | 1): Promise<string> => {
  const chunks: Array<Uint8Array> = []
  for (let offset = 0; offset < content.length || chunks.length === 0; offset += chunkSize) {
    chunks.push(content.subarray(offset, offset + chunkSize))
  }
  const leaves = await Promise.all(chunks.map(async (chunk) => {
    const bytes = cidVersion === 1
      ? chunk
      : dagPb.encode({ Data: new UnixFS({ type: "file", data: chunk }).marshal(), Links: [] })
    return { cid: CID.create(cidVersion, cidVersion === 1 ? raw.code : dagPb.code, await sha256.digest(bytes)), size: bytes.length }
  }))
  if (leaves.length === 1) return leaves[0]!.cid.toString()
  const root = dagPb.encode({
    Data: new UnixFS({ type: "file", blockSizes: chunks.map((chunk) => BigInt(chunk.length)) }).marshal(),
    Links: leaves.map(({ cid, size }) => ({ Hash: cid, Name: "", Tsize: size }))
  })
  return CID.create(cidVersion, dagPb.code, await sha256.digest(root)).toString()
}

describe("the Kubo CIDs the contract pins", () => {
  for (const vector of kuboVectors) {
    it(`${vector.cid} is what the UnixFS spec gives for ${vector.name} as CIDv${vector.cidVersion}`, async () => {
      assert.strictEqual(await cidByHand(vector.content, vector.cidVersion), vector.cid)
    })
  }
})
