/**
 * A UnixFS file's bytes, all of them or a range, read straight from a blockstore. The walk down the file's DAG goes
 * into a child only when the child's bytes (its UnixFS blocksize) overlap the range, so 1 MiB read from the middle
 * of a large file costs the nodes on the way down and the one or two leaves that hold those bytes, nothing else.
 * Each node's wanted children are read a few ahead of the consumer (`readAhead`), every one of them in the range.
 *
 * Not ipfs-unixfs-exporter's own ranged read: it also reads the leaf after a range that ends on a leaf boundary,
 * and on a whole read it fetches every child of a node at once (a 1,024-link node is 1 GiB in flight).
 */
import * as dagPb from "@ipld/dag-pb"
import { UnixFS } from "ipfs-unixfs"
import type { CID } from "multiformats/cid"
import * as raw from "multiformats/codecs/raw"

/** A block's bytes; fails when the store lacks it. */
export type GetBlock = (cid: CID) => Promise<Uint8Array>

/** The CID names no UnixFS file: a directory, a symlink, another codec. (The name is the exporter's for the same.) */
export class NotAFile extends Error {
  override readonly name = "NotAFileError"
}

/** A file node's own bytes, its children and their sizes (the UnixFS blocksizes), and the bytes under it. */
interface FileNode {
  readonly data: Uint8Array | undefined
  readonly links: ReadonlyArray<CID>
  readonly sizes: ReadonlyArray<bigint>
  readonly size: number
}

const decode = (cid: CID, bytes: Uint8Array): FileNode => {
  if (cid.code === raw.code) return { data: bytes, links: [], sizes: [], size: bytes.byteLength }
  if (cid.code !== dagPb.code) throw new NotAFile(`${cid} is neither dag-pb nor raw`)
  const node = dagPb.decode(bytes)
  if (node.Data === undefined) throw new NotAFile(`${cid} has no UnixFS data`)
  const unixfs = UnixFS.unmarshal(node.Data)
  if (unixfs.type !== "file" && unixfs.type !== "raw") throw new NotAFile(`${cid} is a UnixFS ${unixfs.type}`)
  if (node.Links.length !== unixfs.blockSizes.length) throw new Error(`${cid} has ${node.Links.length} links but ${unixfs.blockSizes.length} blocksizes`)
  return { data: unixfs.data, links: node.Links.map((link) => link.Hash), sizes: unixfs.blockSizes, size: Number(unixfs.fileSize()) }
}

/** The bytes `[start, end)` of the file, under `node` whose first byte is the file's byte `position`. */
async function* walk(get: GetBlock, node: FileNode, position: number, start: number, end: number, readAhead: number): AsyncGenerator<Uint8Array> {
  if (node.data !== undefined && node.data.byteLength > 0) {
    const from = Math.max(start - position, 0)
    const to = Math.min(end - position, node.data.byteLength)
    if (from < to) yield from === 0 && to === node.data.byteLength ? node.data : node.data.subarray(from, to)
    position += node.data.byteLength
  }
  const wanted: Array<{ readonly cid: CID; readonly position: number; readonly size: number }> = []
  for (let i = 0; i < node.links.length && position < end; i++) {
    const size = Number(node.sizes[i])
    if (position + size > start) wanted.push({ cid: node.links[i]!, position, size })
    position += size
  }
  const reading: Array<Promise<Uint8Array> | undefined> = []
  const read = (i: number) => {
    const block = get(wanted[i]!.cid)
    // Awaited in its turn; a read ahead that fails while an earlier child is consumed must not go unhandled.
    block.catch(() => undefined)
    reading[i] = block
  }
  for (let i = 0; i < Math.min(readAhead, wanted.length); i++) read(i)
  for (let i = 0; i < wanted.length; i++) {
    const bytes = await reading[i]!
    reading[i] = undefined
    if (i + readAhead < wanted.length) read(i + readAhead)
    const child = decode(wanted[i]!.cid, bytes)
    if (child.size !== wanted[i]!.size) throw new Error(`${wanted[i]!.cid} holds ${child.size} bytes, its parent says ${wanted[i]!.size}`)
    yield* walk(get, child, wanted[i]!.position, start, end, readAhead)
  }
}

/**
 * The file under `root`, or `length` bytes of it from `offset` (to the end when `length` is left out); a range past
 * the end is cut at the end. Fails with NotAFile when `root` names no UnixFS file, and with the store's error when a
 * block is missing.
 */
export async function* fileBytes(get: GetBlock, root: CID, range: { readonly offset: number; readonly length?: number } = { offset: 0 }, readAhead = 4) {
  const top = decode(root, await get(root))
  const start = Math.min(Math.max(range.offset, 0), top.size)
  const end = range.length === undefined ? top.size : Math.min(top.size, start + Math.max(range.length, 0))
  if (start >= end) return
  let read = 0
  for await (const bytes of walk(get, top, 0, start, end, readAhead)) {
    read += bytes.byteLength
    yield bytes
  }
  if (read !== end - start) throw new Error(`${root} gave ${read} bytes of the ${end - start} asked for`)
}
