/**
 * SnapshotStore.collectGarbage on an embedded blockstore. Mark: every block a live root reaches, level by level,
 * each once; dag-pb nodes are read for their links, raw leaves have none and are marked unread. Sweep: every other
 * block the store holds is deleted. Blocks are compared by multihash, as the stores key them (their listings hand
 * out CIDs of another codec or version than the links name). A live root, or a block below one, that the store
 * lacks is passed over: there is nothing of it to keep.
 */
import * as dagPb from "@ipld/dag-pb"
import type { Blockstore } from "interface-blockstore"
import type { CID } from "multiformats/cid"
import { type AbortOptions, blockKey, getBlock, isNotFound, mapConcurrently } from "./Blocks.ts"

const readConcurrency = 16

const linksOf = async (store: Pick<Blockstore, "get">, cid: CID, options: AbortOptions): Promise<ReadonlyArray<CID>> => {
  try {
    return dagPb.decode(await getBlock(store, cid, options)).Links.map((link) => link.Hash)
  } catch (cause) {
    if (isNotFound(cause)) return []
    throw cause
  }
}

/** Deletes every block no root of `live` reaches; gives how many went. */
export const markAndSweep = async (
  store: Pick<Blockstore, "get" | "getAll" | "deleteMany">,
  live: ReadonlyArray<CID>,
  options: AbortOptions
): Promise<number> => {
  const marked = new Set<string>()
  let level: ReadonlyArray<CID> = live
  while (level.length > 0) {
    const unseen = level.filter((cid) => {
      const key = blockKey(cid)
      if (marked.has(key)) return false
      marked.add(key)
      return true
    })
    const below = await mapConcurrently(
      unseen.filter((cid) => cid.code === dagPb.code),
      readConcurrency,
      (cid) => linksOf(store, cid, options)
    )
    level = below.flat()
  }
  const unreached: Array<CID> = []
  for await (const { cid } of store.getAll(options)) if (!marked.has(blockKey(cid))) unreached.push(cid)
  for await (const _ of store.deleteMany(unreached, options)) { /* drain */ }
  return unreached.length
}
