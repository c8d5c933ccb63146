/**
 * A file's content imported as ipfs-unixfs-importer imports it with HeliaContentStore's settings (CIDv1, raw leaves,
 * 1 MiB chunks, 1024 links per node), so the file gets the CID `ipfs add` gives it. Content that ends within its
 * first chunk, most files of a workspace, is hashed and stored here as the importer would store it (a raw block, or
 * a dag-pb file node holding the bytes when it has a mode): the importer's generators cost far more than the hashing
 * for small files. Longer content goes through the importer.
 */
import { UnixFS } from "ipfs-unixfs"
import { CID } from "multiformats/cid"
import * as raw from "multiformats/codecs/raw"
import { sha256 } from "multiformats/hashes/sha2"
import { type UnixfsModules, unixfsModules } from "../UnixfsModules.ts"
import { defaultFileMode, type Linked, persistNode, type PutBlock } from "./DagNodes.ts"

const chunkSize = 1_048_576

const importSettings = ({ balanced, fixedSize }: UnixfsModules) => ({
  cidVersion: 1 as const,
  rawLeaves: true,
  chunker: fixedSize({ chunkSize }),
  layout: balanced({ maxChildrenPerNode: 1024 })
})

/** Imports `content` as a file with `mode` (permission bits). */
export const importContent = async (content: AsyncIterable<Uint8Array>, mode: number, put: PutBlock): Promise<Linked> => {
  const iterator = content[Symbol.asyncIterator]()
  const head: Array<Uint8Array> = []
  let headBytes = 0
  let next = await iterator.next()
  // Reads until the content ends, or passes one chunk.
  while (next.done !== true) {
    head.push(next.value)
    headBytes += next.value.byteLength
    if (headBytes > chunkSize) break
    next = await iterator.next()
  }
  if (next.done === true) {
    const bytes = head.length === 1 ? head[0]! : Buffer.concat(head)
    if (mode !== defaultFileMode) {
      return persistNode({ Data: new UnixFS({ type: "file", mode, data: bytes }).marshal(), Links: [] }, put)
    }
    const cid = CID.createV1(raw.code, await sha256.digest(bytes))
    await put(cid, bytes)
    return { cid, tsize: bytes.byteLength }
  }
  const whole = async function*() {
    yield* head
    for (let rest = await iterator.next(); rest.done !== true; rest = await iterator.next()) yield rest.value
  }
  // Given the default mode, the importer would wrap a single chunk in a dag-pb node: it gets none.
  const modules = await unixfsModules()
  const imported = await modules.importFile(
    mode === defaultFileMode ? { content: whole() } : { content: whole(), mode },
    { put },
    importSettings(modules)
  )
  return { cid: imported.cid, tsize: Number(imported.size) }
}
