/**
 * SnapshotStore.readTree on any block store, with ipfs-unixfs-exporter (flat directories and HAMT shards alike).
 * A raw child is a whole single-block file with no metadata: its link's Tsize is its size and its mode is the
 * default, so its bytes are never read. Every other child costs one small node (a file's root, a symlink, a
 * directory), read a few at a time.
 */
import type { TreeListing } from "@cairn/content-store"
import type { UnixFSDirectory, UnixFSDirectoryEntry } from "ipfs-unixfs-exporter"
import type { CID } from "multiformats/cid"
import * as raw from "multiformats/codecs/raw"
import { unixfsModules } from "../UnixfsModules.ts"
import { type AbortOptions, mapConcurrently, type TreeBlockstore } from "./Blocks.ts"
import { defaultDirectoryMode, defaultFileMode } from "./DagNodes.ts"

/** The root is no directory. */
export class RootIsNotADirectory extends Error {
  override readonly name = "RootIsNotADirectory"
}

/** A child that is no UnixFS node (dag-cbor, …): named like the exporter's own error, so callers treat it alike. */
class NotUnixFSError extends Error {
  override readonly name = "NotUnixFSError"
}

/** Links in UTF-8 byte order of their names (which is code point order): a flat directory's order, and `ipfs ls`'s. */
const sortedByName = (links: ReadonlyArray<UnixFSDirectoryEntry>) =>
  links
    .map((link) => ({ link, key: Buffer.from(link.name) }))
    .sort((a, b) => Buffer.compare(a.key, b.key))
    .map(({ link }) => link)

const readConcurrency = 16

export const readTree = async (
  store: Pick<TreeBlockstore, "get">,
  root: CID,
  { signal }: AbortOptions
): Promise<ReadonlyArray<TreeListing>> => {
  const options = { offline: true, ...(signal === undefined ? {} : { signal }) }
  const { exporter } = await unixfsModules()
  const top = await exporter(root, store, options)
  if (top.type !== "directory") throw new RootIsNotADirectory(`${root} is not a directory`)
  const found: Array<TreeListing> = []
  const visit = async (directory: UnixFSDirectory, prefix: string): Promise<void> => {
    const listed: Array<UnixFSDirectoryEntry> = []
    for await (const link of directory.entries(options)) listed.push(link)
    const links = sortedByName(listed)
    const entries = await mapConcurrently(
      links,
      readConcurrency,
      (link) => link.cid.code === raw.code ? Promise.resolve(undefined) : exporter(link.cid, store, options)
    )
    for (const [index, link] of links.entries()) {
      const path = `${prefix}${link.name}`
      const cid = link.cid.toString()
      const entry = entries[index]
      if (entry === undefined) {
        found.push({ path, kind: "file", cid, mode: defaultFileMode, size: Number(link.size) })
      } else if (entry.type === "directory") {
        found.push({ path, kind: "directory", cid, mode: entry.unixfs.mode ?? defaultDirectoryMode, size: 0 })
        await visit(entry, `${path}/`)
      } else if (entry.type === "file" && entry.unixfs.type === "symlink") {
        const target = new TextDecoder().decode(entry.unixfs.data ?? new Uint8Array(0))
        found.push({ path, kind: "symlink", cid, mode: entry.unixfs.mode ?? defaultFileMode, size: 0, target })
      } else if (entry.type === "file") {
        found.push({ path, kind: "file", cid, mode: entry.unixfs.mode ?? defaultFileMode, size: Number(entry.size) })
      } else if (entry.type === "raw" || entry.type === "identity") {
        found.push({ path, kind: "file", cid, mode: defaultFileMode, size: Number(entry.size) })
      } else {
        throw new NotUnixFSError(`${path} (${cid}) is not UnixFS`)
      }
    }
  }
  await visit(top, "")
  return found
}
