/**
 * A file staged as the raw leaves an import would cut it into (1 MiB pieces, Kubo's `size-1048576` chunker), each
 * in a file of its own with its SHA-256: what an upload hands a content store when its file part is too large to hold
 * in memory. A stream of the staged file's bytes can carry its leaves (`withStagedLeaves`), so an adapter that keeps
 * raw leaves as files (the embedded store) moves them into its blockstore instead of reading the bytes again
 * (`stagedLeavesOf`). Writing and reading the leaves on disk is `LeafWriter` in `@cairn/content-store/node`.
 */
import type { Stream } from "effect"

/** The chunk size of every adapter's import (`ipfs add --chunker=size-1048576`). */
export const leafBytes = 1024 * 1024

/** One staged leaf: a file holding the leaf's bytes, and their SHA-256. */
export interface StagedLeaf {
  readonly file: string
  readonly size: number
  readonly sha256: Uint8Array
}

/** A whole staged file: its leaves in order (one empty leaf for an empty file, as the importer cuts it). */
export interface StagedLeaves {
  readonly leaves: ReadonlyArray<StagedLeaf>
  readonly size: number
  readonly leafBytes: number
}

const stagedKey = Symbol.for("@cairn/content-store/StagedLeaves")

/** A stream of the staged file's bytes that also says where its leaves are. The leaves must stay until it is read. */
export const withStagedLeaves = (
  content: Stream.Stream<Uint8Array, unknown>,
  staged: StagedLeaves
): Stream.Stream<Uint8Array, unknown> => Object.assign(content, { [stagedKey]: staged })

/** The staged leaves behind a stream `withStagedLeaves` made, or undefined for any other stream. */
export const stagedLeavesOf = (content: Stream.Stream<Uint8Array, unknown>): StagedLeaves | undefined =>
  (content as { readonly [stagedKey]?: StagedLeaves })[stagedKey]
