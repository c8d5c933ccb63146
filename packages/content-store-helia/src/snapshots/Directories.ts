/**
 * UnixFS directory and symlink nodes as ipfs-unixfs-importer (and Kubo) make them. A directory links its children
 * by name with their cumulative sizes and stores its mode only when it is not 0o755. A directory whose links pass
 * 256 KiB by Kubo's estimate (each link's name and CID bytes) becomes a HAMT shard, built by the importer's own
 * DirSharded (murmur3-64, fanout 256), so its layout is the one `ipfs add -r` gives.
 *
 * One difference from the importer: it leaves subdirectories out of the estimate (they have no CID yet when it
 * decides), Kubo counts them, and so does this module. A directory of files alone is estimated the same by all
 * three; one that passes 256 KiB only with its subdirectories' links is sharded here and by Kubo, not by the
 * importer.
 */
import { UnixFS } from "ipfs-unixfs"
import type { ImportResult } from "ipfs-unixfs-importer"
import { type Linked, persistNode, type PutBlock } from "./DagNodes.ts"

/** The importer's `shardSplitThresholdBytes` default, which is Kubo's `Import.UnixFSHAMTDirectorySizeThreshold`. */
const shardThreshold = 262_144

/** The estimate Kubo and the importer (`links-bytes`) compare with the threshold. */
const estimatedSize = (children: ReadonlyMap<string, Linked>) => {
  let size = 0
  for (const [name, child] of children) size += Buffer.byteLength(name) + child.cid.byteLength
  return size
}

const shardedDirectory = async (children: ReadonlyMap<string, Linked>, mode: number, put: PutBlock): Promise<Linked> => {
  // Loaded on first use, as the importer is (UnixfsModules).
  const { DirSharded } = await import("ipfs-unixfs-importer/utils")
  const shard = new DirSharded({ root: true, dir: true, path: "", dirty: true, flat: false, mode }, { cidVersion: 1 })
  for (const [name, child] of children) await shard.put(name, { cid: child.cid, size: BigInt(child.tsize) })
  // The shard's sub-shards come first, its root last.
  let root: ImportResult | undefined
  for await (const flushed of shard.flush({ put })) root = flushed
  if (root === undefined) throw new Error("the HAMT shard flushed no root")
  return { cid: root.cid, tsize: Number(root.size) }
}

/** A directory of `children` (name → node) with permission bits `mode`. */
export const directoryNode = (children: ReadonlyMap<string, Linked>, mode: number, put: PutBlock): Promise<Linked> =>
  estimatedSize(children) > shardThreshold
    ? shardedDirectory(children, mode, put)
    : persistNode({
      Data: new UnixFS({ type: "directory", mode }).marshal(),
      Links: Array.from(children, ([name, child]) => ({ Name: name, Hash: child.cid, Tsize: child.tsize }))
    }, put)

/** A symlink: a UnixFS node whose data is the target's bytes. */
export const symlinkNode = (target: string, put: PutBlock): Promise<Linked> =>
  persistNode({ Data: new UnixFS({ type: "symlink", data: new TextEncoder().encode(target) }).marshal(), Links: [] }, put)
