/**
 * dag-pb nodes of a tree being built: each is encoded canonically (links sorted by name bytes, as `prepare` does),
 * named by a CIDv1, handed to the writer, and known to its parent by CID and cumulative size (a link's Tsize: the
 * node's own bytes and everything below it), as ipfs-unixfs-importer and Kubo count it.
 */
import * as dagPb from "@ipld/dag-pb"
import { CID } from "multiformats/cid"
import { sha256 } from "multiformats/hashes/sha2"

/** UnixFS's modes when a node stores none (and the modes it leaves out when they are given). */
export const defaultFileMode = 0o644
export const defaultDirectoryMode = 0o755

/** A node of the tree: its CID, and the cumulative size of its DAG. */
export interface Linked {
  readonly cid: CID
  readonly tsize: number
}

/** Where new blocks go (a BlockWriter's `put`). */
export type PutBlock = (cid: CID, bytes: Uint8Array) => Promise<CID>

/** The cumulative size of an encoded node: its bytes and its links' Tsizes. */
export const cumulativeSize = (bytes: Uint8Array, node: dagPb.PBNode) =>
  node.Links.reduce((total, link) => total + (link.Tsize ?? 0), bytes.byteLength)

export const persistNode = async (node: { readonly Data: Uint8Array; readonly Links: ReadonlyArray<dagPb.PBLink> }, put: PutBlock): Promise<Linked> => {
  const prepared = dagPb.prepare({ Data: node.Data, Links: [...node.Links] })
  const bytes = dagPb.encode(prepared)
  const cid = CID.createV1(dagPb.code, await sha256.digest(bytes))
  await put(cid, bytes)
  return { cid, tsize: cumulativeSize(bytes, prepared) }
}
