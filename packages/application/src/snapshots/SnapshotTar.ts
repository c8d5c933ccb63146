/**
 * A stored tree as a gzipped tar, streamed: the listing (`readTree`: directories before their children) becomes
 * entries under one top directory named after the snapshot (as `ipfs get <cid>` writes it), directories and files
 * with their stored modes, symlinks with their targets, each file's bytes streamed from the store as the archive is
 * read (a file is never held whole). Tar entries are written with modern-tar (USTAR, PAX records for long names);
 * gzip is the platform's CompressionStream. Snapshots keep no times or owners: every entry has the snapshot's time
 * and uid/gid 0.
 */
import type { ContentNotFound, ContentStoreUnavailable, TreeListing } from "@cairn/content-store"
import { Effect, Schema, Stream } from "effect"
import { createTarPacker, type TarHeader } from "modern-tar"

/** A tar entry's header for a listed entry under `root/`. */
const headerOf = (root: string, entry: TreeListing, mtime: Date): TarHeader => {
  const common = { mtime, mode: entry.mode, uid: 0, gid: 0 }
  switch (entry.kind) {
    case "directory":
      return { ...common, name: `${root}/${entry.path}/`, type: "directory", size: 0 }
    case "symlink":
      return { ...common, name: `${root}/${entry.path}`, type: "symlink", size: 0, linkname: entry.target ?? "" }
    case "file":
      return { ...common, name: `${root}/${entry.path}`, type: "file", size: entry.size }
  }
}

/** A tar entry's body went wrong (the store failed mid-file, or gave other bytes than the listing said). */
export class TarFailed extends Schema.TaggedError<TarFailed>()("TarFailed", { detail: Schema.String }) {
  override get message() {
    return `Tar export failed: ${this.detail}`
  }
}

/**
 * The tree as a `.tar.gz` stream. `root` names the top directory; `cat` gives a file's bytes by CID. A failure while
 * streaming fails the stream (the response is cut short: a client sees a truncated archive, never a whole wrong one).
 */
export const tarGz = (
  root: string,
  listing: ReadonlyArray<TreeListing>,
  cat: (cid: string) => Stream.Stream<Uint8Array, ContentNotFound | ContentStoreUnavailable>,
  mtime: Date
): Stream.Stream<Uint8Array, ContentNotFound | ContentStoreUnavailable | TarFailed> =>
  Stream.suspend(() => {
    const { readable, controller } = createTarPacker()
    const body = (entry: TreeListing, writable: WritableStream<Uint8Array>) =>
      Effect.gen(function*() {
        const writer = writable.getWriter()
        let written = 0
        if (entry.kind === "file" && entry.size > 0) {
          // Each write waits for the archive to be read: the store is read no faster than the client takes it.
          yield* Stream.runForEach(cat(entry.cid), (chunk) =>
            Effect.tryPromise({
              try: () => writer.write(chunk),
              catch: (cause) => new TarFailed({ detail: `${entry.path}: ${String(cause)}` })
            }).pipe(Effect.tap(() => Effect.sync(() => (written += chunk.byteLength)))))
        }
        const expected = entry.kind === "file" ? entry.size : 0
        if (written !== expected) return yield* Effect.fail(new TarFailed({ detail: `${entry.path}: ${written} bytes, not ${expected}` }))
        yield* Effect.tryPromise({ try: () => writer.close(), catch: (cause) => new TarFailed({ detail: `${entry.path}: ${String(cause)}` }) })
      })
    const write = Effect.gen(function*() {
      // The top directory has UnixFS's default mode: a snapshot stores none for its root.
      yield* body({ path: "", kind: "directory", cid: root, mode: 0o755, size: 0 }, controller.add({ name: `${root}/`, type: "directory", size: 0, mode: 0o755, mtime, uid: 0, gid: 0 }))
      for (const entry of listing) yield* body(entry, controller.add(headerOf(root, entry, mtime)))
      controller.finalize()
    }).pipe(Effect.tapError((error) => Effect.sync(() => controller.error(error))))
    const gzipped = readable.pipeThrough(new CompressionStream("gzip"))
    return Stream.fromReadableStream({ evaluate: () => gzipped, onError: (cause) => new TarFailed({ detail: String(cause) }) }).pipe(
      Stream.merge(Stream.fromEffectDrain(write))
    )
  })
