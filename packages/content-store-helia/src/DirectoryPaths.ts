/**
 * Paths under a CID and the entries of one directory, on a blockstore, for the gateway (`resolve`, `list`) and for
 * `walk`. A path is followed one name at a time with the exporter's dag-pb resolver, which looks a name up in a
 * plain directory's links or, in a HAMT shard, in the buckets its hash leads to: only the blocks on the way are read.
 */
import type { DirectoryLink, PathTarget } from "@cairn/content-store"
import type { UnixFSComponents } from "@helia/unixfs"
import * as dagPb from "@ipld/dag-pb"
import type { CID } from "multiformats/cid"
import { unixfsModules } from "./UnixfsModules.ts"

type Blockstore = UnixFSComponents["blockstore"]

/** Nothing is at the path: a name its directory lacks, or a name under a file or a symlink. */
export class NoSuchPath extends Error {
  override readonly name = "NoSuchPath"
}

/** The CID names a file or a symlink where a directory was wanted. */
export class NotADirectoryError extends Error {
  override readonly name = "NotADirectoryError"
}

/** The CID names no UnixFS node (another codec, such as dag-cbor). */
class NotUnixfs extends Error {
  override readonly name = "NotUnixFSError"
}

/** Names in UTF-8 byte order (which is code point order), the order of a flat directory's links and of `ipfs ls`. */
export const byName = (a: { readonly name: string }, b: { readonly name: string }) => {
  const x = Array.from(a.name, (c) => c.codePointAt(0)!)
  const y = Array.from(b.name, (c) => c.codePointAt(0)!)
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i]! - y[i]!
  return x.length - y.length
}

/** What the CID is: its root block says (a file's size comes from its root, so nothing below it is read). */
export const stat = async (store: Blockstore, cid: CID, signal: AbortSignal): Promise<PathTarget> => {
  const { exporter } = await unixfsModules()
  const entry = await exporter(cid, store, { signal, offline: true })
  switch (entry.type) {
    case "directory":
      return { cid: cid.toString(), kind: "directory", size: 0 }
    case "file":
      return entry.unixfs.type === "symlink"
        ? { cid: cid.toString(), kind: "symlink", size: 0 }
        : { cid: cid.toString(), kind: "file", size: Number(entry.size) }
    case "raw":
    case "identity":
      return { cid: cid.toString(), kind: "file", size: Number(entry.size) }
    default:
      throw new NotUnixfs(`${cid} is not UnixFS`)
  }
}

/** Follows `path` down from `root`, a name at a time, and says what is there. */
export const resolvePath = async (store: Blockstore, root: CID, path: ReadonlyArray<string>, signal: AbortSignal): Promise<PathTarget> => {
  const { resolvers, NoSuchName } = await unixfsModules()
  const options = { signal, offline: true }
  let cid = root
  for (const name of path) {
    // Only dag-pb nodes are directories; a raw block is a file, and another codec is no UnixFS at all.
    if (cid.code !== dagPb.code) {
      await stat(store, cid, signal)
      throw new NoSuchPath(`${name} is under a file`)
    }
    let next: CID | undefined
    try {
      // A HAMT shard's sub-shards come first; the step that names `name` with nothing left is the entry. A file or
      // symlink gives itself back (no step further down).
      for await (const step of resolvers[dagPb.code]!(cid, [name], store, options)) {
        if (step.name === name && step.rest.length === 0 && !step.cid.equals(cid)) next = step.cid
      }
    } catch (cause) {
      if (cause instanceof NoSuchName) throw new NoSuchPath(`no ${name} under ${cid}`)
      // The resolver reads a file of several blocks (its links before its data) as a malformed directory.
      if ((await stat(store, cid, signal).catch(() => undefined))?.kind === "file") throw new NoSuchPath(`${name} is under a file`)
      throw cause
    }
    if (next === undefined) throw new NoSuchPath(`${name} is under a file or a symlink`)
    cid = next
  }
  return stat(store, cid, signal)
}

/** The entries of the directory `cid`, each stat'ed from its root block, in name order. */
export const listDirectory = async (store: Blockstore, cid: CID, signal: AbortSignal): Promise<ReadonlyArray<DirectoryLink>> => {
  const { exporter } = await unixfsModules()
  const options = { signal, offline: true }
  const top = await exporter(cid, store, options)
  if (top.type !== "directory") throw new NotADirectoryError(`${cid} is a ${top.type}`)
  const links: Array<{ readonly name: string; readonly cid: CID }> = []
  for await (const link of top.entries(options)) links.push({ name: link.name, cid: link.cid })
  links.sort(byName)
  const found: Array<DirectoryLink> = []
  // A few root blocks at a time: a shard of thousands of entries is listed without one read after the other.
  for (let at = 0; at < links.length; at += 16) {
    const batch = links.slice(at, at + 16)
    const stats = await Promise.all(batch.map((link) => stat(store, link.cid, signal)))
    stats.forEach((target, i) => found.push({ name: batch[i]!.name, ...target }))
  }
  return found
}
