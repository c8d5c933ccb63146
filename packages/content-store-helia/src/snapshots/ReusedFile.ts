/**
 * A file an earlier tree stored, named by its CID, placed in a new tree with the mode the new tree wants, without
 * reading its content when the mode did not change (the common case: a raw file costs a size lookup, a dag-pb file
 * its root node). A mode lives in a file's nodes, so a changed mode needs new nodes over the same leaves: the ones
 * ipfs-unixfs-importer makes for the same bytes and mode, so a reused file always has the CID an import of its
 * content would give.
 * - One raw block has no room for a mode. The importer gives a single-chunk file with a mode a dag-pb file node that
 *   holds the bytes inline (and none of the raw leaf), so that is made here, and undone when the mode goes back to
 *   0o644. Those bytes (at most one 1 MiB chunk) are the only content ever read.
 * - The importer writes the mode into every dag-pb node of a multi-chunk file (root and intermediate), so all of
 *   them are re-encoded with the new mode; the raw leaves stay as they are.
 *
 * Files this store imported or placed are remembered (KnownFiles), so the next tree reuses them with no I/O at all.
 */
import * as dagPb from "@ipld/dag-pb"
import { UnixFS } from "ipfs-unixfs"
import { CID } from "multiformats/cid"
import * as raw from "multiformats/codecs/raw"
import { sha256 } from "multiformats/hashes/sha2"
import { type AbortOptions, type BlockSize, getBlock, isNotFound, type TreeBlockstore } from "./Blocks.ts"
import { cumulativeSize, defaultFileMode, type Linked, persistNode, type PutBlock } from "./DagNodes.ts"

/** The CID names no block of this store. */
export class FileNotStored extends Error {
  override readonly name = "FileNotStored"
}

/** The CID names a directory, a symlink, or no UnixFS file at all. */
export class NotAFile extends Error {
  override readonly name = "NotAFile"
}

/** The file's UnixFS data; anything but a file is NotAFile. */
const fileData = (node: dagPb.PBNode, cid: CID) => {
  let unixfs: UnixFS | undefined
  try {
    unixfs = node.Data === undefined ? undefined : UnixFS.unmarshal(node.Data)
  } catch {
    unixfs = undefined
  }
  if (unixfs?.type !== "file" && unixfs?.type !== "raw") throw new NotAFile(`${cid} is not a UnixFS file`)
  return unixfs
}

/**
 * The cumulative size and stored mode of file roots this store wrote or checked, so that reusing them again costs
 * nothing. A file is remembered only once a tree holding it is stored whole; only garbage collection removes blocks,
 * so it must `forget` everything first. A few hundred thousand files are remembered at most (then memory starts over).
 */
export class KnownFiles {
  private readonly files = new Map<string, { readonly tsize: number; readonly mode: number }>()

  remember(node: Linked, mode: number) {
    if (this.files.size >= 250_000) this.files.clear()
    this.files.set(node.cid.toString(), { tsize: node.tsize, mode })
  }

  /** The file as a node of a new tree, if it is known with this mode. */
  recall(cid: CID, mode: number): Linked | undefined {
    const known = this.files.get(cid.toString())
    return known?.mode === mode ? { cid, tsize: known.tsize } : undefined
  }

  forget() {
    this.files.clear()
  }
}

export interface ReuseContext {
  readonly blockstore: TreeBlockstore
  readonly blockSize: BlockSize
  readonly put: PutBlock
  readonly known: Pick<KnownFiles, "recall">
  readonly options: AbortOptions
}

const read = async ({ blockstore, options }: ReuseContext, cid: CID) => {
  try {
    return await getBlock(blockstore, cid, options)
  } catch (cause) {
    if (isNotFound(cause)) throw new FileNotStored(`${cid} is not stored`)
    throw cause
  }
}

/** The file node and every dag-pb node below it, re-encoded with `mode`; raw leaves are kept. */
const withMode = async (context: ReuseContext, node: dagPb.PBNode, cid: CID, mode: number): Promise<Linked> => {
  const unixfs = fileData(node, cid)
  const links = await Promise.all(node.Links.map(async (link) => {
    if (link.Hash.code !== dagPb.code) return link
    const child = await withMode(context, dagPb.decode(await read(context, link.Hash)), link.Hash, mode)
    return { ...link, Hash: child.cid, Tsize: child.tsize }
  }))
  const data = new UnixFS({
    type: unixfs.type === "raw" ? "raw" : "file",
    blockSizes: unixfs.blockSizes,
    mode,
    ...(unixfs.data === undefined ? {} : { data: unixfs.data })
  })
  return persistNode({ Data: data.marshal(), Links: links }, context.put)
}

/**
 * The file under `cid` as a node of a new tree with `mode` (permission bits). The caller remembers the node once its
 * blocks are written.
 */
export const reuseFile = async (context: ReuseContext, cid: CID, mode: number): Promise<Linked> =>
  context.known.recall(cid, mode) ?? place(context, cid, mode)

const place = async (context: ReuseContext, cid: CID, mode: number): Promise<Linked> => {
  if (cid.code === raw.code) {
    if (mode === defaultFileMode) {
      const size = await context.blockSize(cid, context.options)
      if (size === undefined) throw new FileNotStored(`${cid} is not stored`)
      return { cid, tsize: size }
    }
    const bytes = await read(context, cid)
    return persistNode({ Data: new UnixFS({ type: "file", mode, data: bytes }).marshal(), Links: [] }, context.put)
  }
  if (cid.code !== dagPb.code) throw new NotAFile(`${cid} is neither raw nor dag-pb`)
  const bytes = await read(context, cid)
  const node = dagPb.decode(bytes)
  const unixfs = fileData(node, cid)
  if (unixfs.mode === mode) return { cid, tsize: cumulativeSize(bytes, node) }
  if (node.Links.length === 0 && mode === defaultFileMode) {
    // One chunk held inline because of its mode: back to the raw block an import with no mode gives.
    const content = unixfs.data ?? new Uint8Array(0)
    const leaf = CID.createV1(raw.code, await sha256.digest(content))
    await context.put(leaf, content)
    return { cid: leaf, tsize: content.byteLength }
  }
  return withMode(context, node, cid, mode)
}
