/**
 * SnapshotStore.diffTrees on any block store: two trees walked together, directory by directory. A name whose link
 * has the same CID on both sides is the same content (file, symlink or whole subtree), so it is passed over without
 * a read: only the directories on a changed path are read, and of each changed entry only its node (a file's root
 * node for its size and mode, never its content; a raw leaf is sized by its link and not read at all).
 *
 * HAMT-sharded directories are walked together too: a name's bucket (the first hex digits of its link's name at each
 * level) is where its hash puts it on both sides, so a bucket whose link is the same on both sides holds the same
 * entries, and only the buckets that differ are read. A directory that is flat on one side and sharded on the other
 * (it crossed the shard threshold) is read whole on both.
 *
 * Nodes are decoded here with @ipld/dag-pb and ipfs-unixfs (the exporter would read every sub-shard of a directory
 * to list it). Subtrees present on one side only are walked whole, to name each file they add or remove.
 */
import type { TreeDiff, TreeDiffEntry } from "@cairn/content-store"
import * as dagPb from "@ipld/dag-pb"
import { UnixFS } from "ipfs-unixfs"
import type { CID } from "multiformats/cid"
import * as raw from "multiformats/codecs/raw"
import { identity } from "multiformats/hashes/identity"
import { type AbortOptions, getBlock, mapConcurrently, type TreeBlockstore } from "./Blocks.ts"
import { defaultFileMode } from "./DagNodes.ts"
import { RootIsNotADirectory } from "./ReadTree.ts"

/** A child that is no UnixFS node (dag-cbor, …): named like the exporter's own error, so callers treat it alike. */
class NotUnixFSError extends Error {
  override readonly name = "NotUnixFSError"
}

interface Link {
  readonly name: string
  readonly cid: CID
  readonly tsize: number
}

/** A node as a diff reads it: a directory (flat, or a HAMT shard or sub-shard), or a file or symlink. */
type Node =
  | { readonly kind: "flat"; readonly links: ReadonlyArray<Link> }
  | { readonly kind: "shard"; readonly links: ReadonlyArray<Link>; readonly padLength: number }
  | { readonly kind: "leaf"; readonly entry: TreeDiffEntry }

type Directory = Exclude<Node, { kind: "leaf" }>

const readConcurrency = 16

const byPath = (a: { readonly path: string }, b: { readonly path: string }) => Buffer.compare(Buffer.from(a.path), Buffer.from(b.path))

const linksOf = (node: dagPb.PBNode): ReadonlyArray<Link> =>
  node.Links.map((link) => ({ name: link.Name ?? "", cid: link.Hash, tsize: link.Tsize ?? 0 }))

export const diffTrees = async (
  store: Pick<TreeBlockstore, "get">,
  from: CID,
  to: CID,
  options: AbortOptions
): Promise<TreeDiff> => {
  const bytesOf = (cid: CID) => cid.multihash.code === identity.code ? Promise.resolve(cid.multihash.digest) : getBlock(store, cid, options)

  /** The node a link names, at `path`: a raw leaf from its link alone, anything else read and decoded. */
  const nodeOf = async (link: Link, path: string): Promise<Node> => {
    const cid = link.cid.toString()
    if (link.cid.code === raw.code) return { kind: "leaf", entry: { path, kind: "file", cid, size: link.tsize, mode: defaultFileMode } }
    if (link.cid.code !== dagPb.code) throw new NotUnixFSError(`${path} (${cid}) is not UnixFS`)
    const node = dagPb.decode(await bytesOf(link.cid))
    if (node.Data === undefined) throw new NotUnixFSError(`${path} (${cid}) is not UnixFS`)
    const unixfs = UnixFS.unmarshal(node.Data)
    switch (unixfs.type) {
      case "directory":
        return { kind: "flat", links: linksOf(node) }
      case "hamt-sharded-directory":
        return { kind: "shard", links: linksOf(node), padLength: (Number(unixfs.fanout ?? 256n) - 1).toString(16).length }
      case "symlink":
        return {
          kind: "leaf",
          entry: { path, kind: "symlink", cid, size: 0, mode: unixfs.mode ?? defaultFileMode, target: new TextDecoder().decode(unixfs.data ?? new Uint8Array(0)) }
        }
      case "file":
      case "raw":
        return { kind: "leaf", entry: { path, kind: "file", cid, size: Number(unixfs.fileSize()), mode: unixfs.mode ?? defaultFileMode } }
      default:
        throw new NotUnixFSError(`${path} (${cid}) is a UnixFS ${unixfs.type} node`)
    }
  }

  /** A shard link names a sub-shard (its bucket only) or an entry (its bucket, then the entry's name). */
  const isSubShard = (link: Link, padLength: number) => link.name.length === padLength

  /** Every entry of a directory by name, a sharded one's from all its sub-shards. */
  const entriesOf = async (directory: Directory): Promise<Map<string, Link>> => {
    if (directory.kind === "flat") return new Map(directory.links.map((link) => [link.name, link]))
    const entries = new Map<string, Link>()
    const nested = await mapConcurrently(directory.links, readConcurrency, async (link) =>
      isSubShard(link, directory.padLength) ? [...(await entriesOf(await subShard(link)))] : [[link.name.slice(directory.padLength), link] as const])
    for (const list of nested) for (const [name, link] of list) entries.set(name, { ...link, name })
    return entries
  }

  const subShard = async (link: Link): Promise<Directory> => {
    const node = await nodeOf(link, link.name)
    if (node.kind !== "shard") throw new NotUnixFSError(`sub-shard ${link.cid} is not a HAMT shard`)
    return node
  }

  /**
   * The entries of two directories that may differ, by name on each side: everything of each when they are not two
   * shards alike; of two shards, only what lies in buckets whose links differ (recursively).
   */
  const differingEntries = async (a: Directory, b: Directory): Promise<[Map<string, Link>, Map<string, Link>]> => {
    if (a.kind !== "shard" || b.kind !== "shard" || a.padLength !== b.padLength) return Promise.all([entriesOf(a), entriesOf(b)])
    const pad = a.padLength
    const bucketsOf = (shard: Directory) => new Map(shard.links.map((link) => [link.name.slice(0, pad), link]))
    const [old, now] = [bucketsOf(a), bucketsOf(b)]
    const differing = [...new Set([...old.keys(), ...now.keys()])].filter((bucket) => {
      const x = old.get(bucket)
      const y = now.get(bucket)
      return x === undefined || y === undefined || x.name !== y.name || !x.cid.equals(y.cid)
    })
    const parts = await mapConcurrently(differing, readConcurrency, async (bucket): Promise<[Map<string, Link>, Map<string, Link>]> => {
      const x = old.get(bucket)
      const y = now.get(bucket)
      if (x !== undefined && y !== undefined && isSubShard(x, pad) && isSubShard(y, pad)) {
        const [sx, sy] = await Promise.all([subShard(x), subShard(y)])
        return differingEntries(sx, sy)
      }
      const side = async (link: Link | undefined): Promise<Map<string, Link>> =>
        link === undefined ? new Map()
        : isSubShard(link, pad) ? entriesOf(await subShard(link))
        : new Map([[link.name.slice(pad), { ...link, name: link.name.slice(pad) }]])
      return Promise.all([side(x), side(y)])
    })
    const merged: [Map<string, Link>, Map<string, Link>] = [new Map(), new Map()]
    for (const [x, y] of parts) {
      for (const [name, link] of x) merged[0].set(name, link)
      for (const [name, link] of y) merged[1].set(name, link)
    }
    return merged
  }

  /** Every file and symlink at and under a node that only one side has. */
  const leavesOf = async (node: Node, path: string): Promise<Array<TreeDiffEntry>> => {
    if (node.kind === "leaf") return [node.entry]
    const links = [...(await entriesOf(node)).values()]
    const children = await mapConcurrently(links, readConcurrency, (link) => nodeOf(link, `${path}/${link.name}`))
    const leaves: Array<TreeDiffEntry> = []
    // Subdirectories one after another: the reads in flight stay about `readConcurrency`, however deep the tree.
    for (const [index, child] of children.entries()) leaves.push(...await leavesOf(child, `${path}/${links[index]!.name}`))
    return leaves
  }

  const added: Array<TreeDiffEntry> = []
  const removed: Array<TreeDiffEntry> = []
  const changed: Array<{ before: TreeDiffEntry; after: TreeDiffEntry }> = []

  const compare = async (before: Directory, after: Directory, prefix: string): Promise<void> => {
    const [old, now] = await differingEntries(before, after)
    // The same CID under a name on both sides: the same content, not read.
    const names = [...new Set([...old.keys(), ...now.keys()])].filter((name) => {
      const a = old.get(name)
      const b = now.get(name)
      return a === undefined || b === undefined || !a.cid.equals(b.cid)
    })
    const pairs = await mapConcurrently(names, readConcurrency, async (name) => {
      const path = `${prefix}${name}`
      const a = old.get(name)
      const b = now.get(name)
      const [x, y] = await Promise.all([a === undefined ? undefined : nodeOf(a, path), b === undefined ? undefined : nodeOf(b, path)])
      return { path, a: x, b: y }
    })
    for (const { path, a, b } of pairs) {
      if (a !== undefined && a.kind !== "leaf" && b !== undefined && b.kind !== "leaf") {
        await compare(a, b, `${path}/`)
      } else if (a?.kind === "leaf" && b?.kind === "leaf") {
        changed.push({ before: a.entry, after: b.entry })
      } else {
        if (a !== undefined) removed.push(...await leavesOf(a, path))
        if (b !== undefined) added.push(...await leavesOf(b, path))
      }
    }
  }

  const rootDirectory = async (root: CID): Promise<Directory> => {
    const node = root.code === dagPb.code ? await nodeOf({ name: "", cid: root, tsize: 0 }, "") : undefined
    if (node === undefined || node.kind === "leaf") throw new RootIsNotADirectory(`${root} is not a directory`)
    return node
  }

  const [before, after] = await Promise.all([rootDirectory(from), rootDirectory(to)])
  if (!from.equals(to)) await compare(before, after, "")
  return {
    added: added.sort(byPath),
    removed: removed.sort(byPath),
    changed: changed.sort((x, y) => byPath(x.after, y.after))
  }
}
