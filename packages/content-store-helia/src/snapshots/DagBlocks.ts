/**
 * Every block of a DAG, for a CAR export: depth first with parents before children, each once (`ipfs dag export`'s
 * order). The next few blocks are read while one is handed out, since each read may be a round trip (Kubo's RPC).
 */
import * as dagPb from "@ipld/dag-pb"
import type { CID } from "multiformats/cid"
import { type AbortOptions, blockKey, getBlock, type TreeBlockstore } from "./Blocks.ts"

/** Reads started ahead of the walk: at most this many from the top of the stack each step. */
const lookahead = 16

export async function* dagBlocks(store: Pick<TreeBlockstore, "get">, root: CID, options: AbortOptions) {
  const seen = new Set<string>()
  const reading = new Map<string, Promise<Uint8Array>>()
  const read = (cid: CID) => {
    const key = blockKey(cid)
    let bytes = reading.get(key)
    if (bytes === undefined) {
      bytes = getBlock(store, cid, options)
      // A read ahead that fails is reported when the walk gets to it, or never if the walk stops first.
      bytes.catch(() => undefined)
      reading.set(key, bytes)
    }
    return bytes
  }
  const pending = [root]
  while (pending.length > 0) {
    // The top of the stack is what comes next.
    for (const next of pending.slice(-lookahead)) if (!seen.has(blockKey(next))) void read(next)
    const cid = pending.pop()!
    const key = blockKey(cid)
    if (seen.has(key)) continue
    seen.add(key)
    const bytes = await read(cid)
    reading.delete(key)
    yield { cid, bytes }
    if (cid.code === dagPb.code) pending.push(...dagPb.decode(bytes).Links.map((link) => link.Hash).reverse())
  }
}
