import { kuboDirectoryVectors } from "@cairn/content-store/testing"
import { assert, describe, it } from "@effect/vitest"
import * as dagPb from "@ipld/dag-pb"
import { UnixFS } from "ipfs-unixfs"
import { CID } from "multiformats/cid"
import * as raw from "multiformats/codecs/raw"
import { sha256 } from "multiformats/hashes/sha2"

const chunkSize = 1_048_576

/** A link's target: its CID and Tsize, the bytes of every block under it (the block's own included). */
interface Node {
  readonly cid: CID
  readonly tsize: number
}

const block = async (bytes: Uint8Array, cidVersion: 0 | 1, code: number): Promise<CID> =>
  CID.create(cidVersion, code, await sha256.digest(bytes))

/** A file laid out as Kubo does (see ContentStoreContract.test.ts): 1 MiB leaves, raw for CIDv1, one root above them. */
const fileByHand = async (content: Uint8Array, cidVersion: 0 | 1): Promise<Node> => {
  const chunks: Array<Uint8Array> = []
  for (let offset = 0; offset < content.length || chunks.length === 0; offset += chunkSize) {
    chunks.push(content.subarray(offset, offset + chunkSize))
  }
  const leaves = await Promise.all(chunks.map(async (chunk) => {
    const bytes = cidVersion === 1 ? chunk : dagPb.encode({ Data: new UnixFS({ type: "file", data: chunk }).marshal(), Links: [] })
    return { cid: await block(bytes, cidVersion, cidVersion === 1 ? raw.code : dagPb.code), tsize: bytes.length }
  }))
  if (leaves.length === 1) return leaves[0]!
  const root = dagPb.encode({
    Data: new UnixFS({ type: "file", blockSizes: chunks.map((chunk) => BigInt(chunk.length)) }).marshal(),
    Links: leaves.map(({ cid, tsize }) => ({ Hash: cid, Name: "", Tsize: tsize }))
  })
  return { cid: await block(root, cidVersion, dagPb.code), tsize: root.length + leaves.reduce((sum, leaf) => sum + leaf.tsize, 0) }
}

/** UnixFS Data of a plain directory: field 1 (Type), varint 1 (Directory), and nothing else (no mode, no mtime). */
const directoryData = Uint8Array.of(0x08, 0x01)

interface Tree {
  readonly [name: string]: Tree | Uint8Array
}

/**
 * A directory as the UnixFS spec lays it out: a dag-pb node whose Data is `directoryData` and whose links, sorted by
 * name bytes, name each child with its CID and Tsize. A directory's CID has the import's version (v1 dag-pb or v0).
 */
const directoryByHand = async (tree: Tree, cidVersion: 0 | 1): Promise<Node> => {
  const links = await Promise.all(Object.keys(tree).sort().map(async (name) => {
    const child = tree[name]!
    const node = child instanceof Uint8Array ? await fileByHand(child, cidVersion) : await directoryByHand(child, cidVersion)
    return { Name: name, Hash: node.cid, Tsize: node.tsize }
  }))
  const bytes = dagPb.encode({ Data: directoryData, Links: links })
  return { cid: await block(bytes, cidVersion, dagPb.code), tsize: bytes.length + links.reduce((sum, link) => sum + link.Tsize, 0) }
}

const treeOf = (files: ReadonlyArray<{ readonly path: string; readonly content: Uint8Array }>): Tree => {
  const root: Record<string, any> = {}
  for (const { path, content } of files) {
    const segments = path.split("/")
    let directory = root
    for (const segment of segments.slice(0, -1)) directory = directory[segment] ??= {}
    directory[segments.at(-1)!] = content
  }
  return root
}

describe("the Kubo directory CIDs the contract pins", () => {
  for (const vector of kuboDirectoryVectors) {
    it(`${vector.cid} is what the UnixFS spec gives for ${vector.name} as CIDv${vector.cidVersion}`, async () => {
      assert.strictEqual((await directoryByHand(treeOf(vector.files), vector.cidVersion)).cid.toString(), vector.cid)
    })
  }
})
