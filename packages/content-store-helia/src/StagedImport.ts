/**
 * A file staged as raw leaves (`@cairn/content-store`'s LeafWriter) imported without reading its bytes again: each
 * leaf's CID comes from the SHA-256 it was staged with, its file is renamed into the blockstore (FsBlocks) or read
 * and put (any other store), and the importer itself builds the nodes above the leaves, so the root is the one
 * `ipfs add` and `addByteStream` give for the same bytes and settings (HeliaContentStore.test.ts compares them).
 */
import type { StagedLeaves } from "@cairn/content-store"
import type { UnixFSComponents } from "@helia/unixfs"
import type { ImporterOptions } from "ipfs-unixfs-importer"
import type { CID } from "multiformats/cid"
import { CID as Cid } from "multiformats/cid"
import * as raw from "multiformats/codecs/raw"
import * as Digest from "multiformats/hashes/digest"
import { sha256 } from "multiformats/hashes/sha2"
import { readFile } from "node:fs/promises"
import { FsBlocks } from "./FsBlocks.ts"
import { unixfsModules } from "./UnixfsModules.ts"

type Blockstore = UnixFSComponents["blockstore"]

/** Whether staged leaves are this import's leaves: raw leaves (CIDv1 only) cut at the import's chunk size. */
export const takesStagedLeaves = (staged: StagedLeaves, cidVersion: 0 | 1, chunkBytes: number) =>
  cidVersion === 1 && staged.leafBytes === chunkBytes && staged.leaves.length > 0

const leafCid = (sha: Uint8Array) => Cid.createV1(raw.code, Digest.create(sha256.code, sha))

/** Moves a staged leaf into the store: by rename when the store keeps blocks as files on the same filesystem. */
const store = async (blockstore: Blockstore, cid: CID, file: string, signal: AbortSignal) => {
  if (blockstore instanceof FsBlocks) {
    try {
      return await blockstore.adopt(cid, file)
    } catch (cause) {
      if ((cause as NodeJS.ErrnoException).code !== "EXDEV") throw cause
    }
  }
  await blockstore.put(cid, await readFile(file), { signal })
}

/**
 * Stores the leaves and the nodes above them; the root's CID. `options` are the import's (CIDv1, raw leaves, the
 * chunk size the leaves were cut at, the layout); the leaves stand in for the chunker's output.
 */
export const importStagedLeaves = async (
  staged: StagedLeaves,
  blockstore: Blockstore,
  options: Partial<ImporterOptions>,
  signal: AbortSignal
): Promise<CID> => {
  const leaves = staged.leaves.map((leaf) => ({ ...leaf, cid: leafCid(leaf.sha256) }))
  for (const leaf of leaves) await store(blockstore, leaf.cid, leaf.file, signal)
  let root: CID | undefined
  const { importer } = await unixfsModules()
  const imported = importer([{ content: [] }], blockstore, {
    ...options,
    async *bufferImporter() {
      for (const leaf of leaves) {
        yield async () => ({ cid: leaf.cid, size: BigInt(leaf.size), block: new Uint8Array() })
      }
    }
  })
  for await (const entry of imported) root = entry.cid
  if (root === undefined) throw new Error("the importer yielded no root")
  return root
}
