/**
 * SnapshotStore.diffTrees on any block store: two trees walked together, directory by directory. A name whose link
 * has the same CID on both sides is the same content (file, symlink or whole subtree), so it is passed over without
 * a read: only the directories on a changed path are listed, and only the nodes of changed entries are read (a
 * file's root node for its size and mode, never its content; a raw child is sized by its link alone, as in
 * ReadTree). Subtrees present on one side only are walked whole, to name each file they add or remove.
 */
import type { TreeDiff, TreeDiffEntry } from "@cairn/content-store"
import type { UnixFSDirectory, UnixFSDirectoryEntry } from "ipfs-unixfs-exporter"
import type { CID } from "multiformats/cid"
import * as raw from "multiformats/codecs/raw"
import { unixfsModules } from "../UnixfsModules.ts"
import { type AbortOptions, mapConcurrently, type TreeBlockstore } from "./Blocks.ts"
import { defaultFileMode } from "./DagNodes.ts"
import { RootIsNotADirectory } from "./ReadTree.ts"

/** A child that is no UnixFS node (dag-cbor, …): named like the exporter's own error, so callers treat it alike. */
class NotUnixFSError extends Error {
  override readonly name = "NotUnixFSError"
}

/** A directory's child, read as far as a diff needs it. */
type Node =
  | { readonly kind: "directory"; readonly directory: UnixFSDirectory }
  | { readonly kind: "leaf"; readonly entry: TreeDiffEntry }

const readConcurrency = 16

const byPath = (a: { readonly path: string }, b: { readonly path: string }) =>
  Buffer.compare(Buffer.from(a.path), Buffer.from(b.path))

export const diffTrees = async (
  store: Pick<TreeBlockstore, "get">,
  from: CID,
  to: CID,
  { signal }: AbortOptions
): Promise<TreeDiff> => {
  const options = { offline: true, ...(signal === undefined ? {} : { signal }) }
  const { exporter } = await unixfsModules()

  const rootDirectory = async (root: CID) => {
    const top = await exporter(root, store, options)
    if (top.type !== "directory") throw new RootIsNotADirectory(`${root} is not a directory`)
    return top
  }

  /** A child by its link: a raw leaf from the link alone, anything else from its node. */
  const nodeOf = async (link: UnixFSDirectoryEntry, path: string): Promise<Node> => {
    const cid = link.cid.toString()
    if (link.cid.code === raw.code) return { kind: "leaf", entry: { path, kind: "file", cid, size: Number(link.size), mode: defaultFileMode } }
    const entry = await exporter(link.cid, store, options)
    if (entry.type === "directory") return { kind: "directory", directory: entry }
    if (entry.type === "file" && entry.unixfs.type === "symlink") {
      const target = new TextDecoder().decode(entry.unixfs.data ?? new Uint8Array(0))
      return { kind: "leaf", entry: { path, kind: "symlink", cid, size: 0, mode: entry.unixfs.mode ?? defaultFileMode, target } }
    }
    if (entry.type === "file") return { kind: "leaf", entry: { path, kind: "file", cid, size: Number(entry.size), mode: entry.unixfs.mode ?? defaultFileMode } }
    if (entry.type === "raw" || entry.type === "identity") {
      return { kind: "leaf", entry: { path, kind: "file", cid, size: Number(entry.size), mode: defaultFileMode } }
    }
    throw new NotUnixFSError(`${path} (${cid}) is not UnixFS`)
  }

  const linksOf = async (directory: UnixFSDirectory) => {
    const links = new Map<string, UnixFSDirectoryEntry>()
    for await (const link of directory.entries(options)) links.set(link.name, link)
    return links
  }

  /** Every file and symlink at and under a node that only one side has. */
  const leavesOf = async (node: Node, prefix: string): Promise<Array<TreeDiffEntry>> => {
    if (node.kind === "leaf") return [node.entry]
    const links = [...(await linksOf(node.directory)).values()]
    const children = await mapConcurrently(links, readConcurrency, (link) => nodeOf(link, `${prefix}${link.name}`))
    const nested = await Promise.all(children.map((child, index) => leavesOf(child, `${prefix}${links[index]!.name}/`)))
    return nested.flat()
  }

  const added: Array<TreeDiffEntry> = []
  const removed: Array<TreeDiffEntry> = []
  const changed: Array<{ before: TreeDiffEntry; after: TreeDiffEntry }> = []

  const compare = async (before: UnixFSDirectory, after: UnixFSDirectory, prefix: string): Promise<void> => {
    const [old, now] = await Promise.all([linksOf(before), linksOf(after)])
    const names = [...new Set([...old.keys(), ...now.keys()])]
    // The same CID under a name on both sides: the same content, not read.
    const differing = names.filter((name) => {
      const a = old.get(name)
      const b = now.get(name)
      return a === undefined || b === undefined || !a.cid.equals(b.cid)
    })
    const pairs = await mapConcurrently(differing, readConcurrency, async (name) => {
      const path = `${prefix}${name}`
      const a = old.get(name)
      const b = now.get(name)
      return {
        name,
        a: a === undefined ? undefined : await nodeOf(a, path),
        b: b === undefined ? undefined : await nodeOf(b, path)
      }
    })
    for (const { name, a, b } of pairs) {
      const path = `${prefix}${name}`
      if (a?.kind === "directory" && b?.kind === "directory") {
        await compare(a.directory, b.directory, `${path}/`)
      } else if (a?.kind === "leaf" && b?.kind === "leaf") {
        changed.push({ before: a.entry, after: b.entry })
      } else {
        if (a !== undefined) removed.push(...await leavesOf(a, `${path}/`))
        if (b !== undefined) added.push(...await leavesOf(b, `${path}/`))
      }
    }
  }

  const [before, after] = await Promise.all([rootDirectory(from), rootDirectory(to)])
  if (!from.equals(to)) await compare(before, after, "")
  return {
    added: added.sort(byPath),
    removed: removed.sort(byPath),
    changed: changed.sort((x, y) => byPath(x.after, y.after))
  }
}
