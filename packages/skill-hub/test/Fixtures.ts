/** Archives for the tests, good and hostile, built with the same libraries a producer would use. */
import { Effect } from "effect"
import { Deflate, gzipSync, strToU8, Zip, type ZipInputFile, ZipPassThrough, zipSync, type Zippable } from "fflate"
import { packTar, type TarEntry } from "modern-tar"
import * as fs from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"

export const MiB = 1024 * 1024

export const skillMd = (name: string, description: string) => `---\nname: ${name}\ndescription: ${description}\n---\n# ${name}\n`

export const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes)

/** Files by path, as text, for comparisons that ignore order. */
export const byPath = (files: ReadonlyArray<{ readonly path: string; readonly content: Uint8Array }>) =>
  Object.fromEntries([...files].sort((a, b) => a.path.localeCompare(b.path)).map((file) => [file.path, text(file.content)]))

export const zip = (entries: Zippable) => zipSync(entries)

/** A zip entry with a Unix mode, such as a symbolic link (0o120777) or a fifo (0o010644). */
export const withMode = (content: string, mode: number): [Uint8Array, { os: number; attrs: number }] => [
  strToU8(content),
  { os: 3, attrs: mode << 16 }
]

const collect = (build: (zip: Zip) => void) => {
  const chunks: Array<Uint8Array> = []
  const archive = new Zip((error, chunk) => {
    if (error) throw error
    chunks.push(chunk)
  })
  build(archive)
  archive.end()
  return Buffer.concat(chunks)
}

/** A zip holding the same name twice, which an object of entries cannot express. */
export const zipWithDuplicate = (name: string) =>
  collect((archive) => {
    for (const content of ["one", "two"]) {
      const file = new ZipPassThrough(name)
      archive.add(file)
      file.push(strToU8(content), true)
    }
  })

/**
 * A raw deflate stream of `prefix` then `zeroMiB` MiB of zeros, made in milliseconds: once the window is all zeros,
 * each sync-flushed MiB compresses to the same bytes, so they are repeated instead of compressed again.
 */
export const deflatedZeros = (zeroMiB: number, prefix = new Uint8Array(0)) => {
  let pending: Array<Uint8Array> = []
  const deflate = new Deflate({ level: 1 }, (chunk) => pending.push(chunk))
  const take = () => {
    const out = Buffer.concat(pending)
    pending = []
    return out
  }
  const parts: Array<Uint8Array> = []
  if (prefix.length > 0) {
    deflate.push(prefix)
    deflate.flush(true)
    parts.push(take())
  }
  const zeros = new Uint8Array(MiB)
  let previous: Buffer | undefined
  let done = 0
  while (done < zeroMiB) {
    deflate.push(zeros)
    deflate.flush(true)
    const out = take()
    done += 1
    parts.push(out)
    if (previous !== undefined && Buffer.compare(previous, out) === 0) {
      for (; done < zeroMiB; done++) parts.push(out)
    }
    previous = out
  }
  deflate.push(new Uint8Array(0), true)
  parts.push(take())
  return Buffer.concat(parts)
}

/** A zip whose one entry is `deflated`, declaring `declaredSize` as its size (true or not). */
export const zipOfDeflated = (name: string, deflated: Uint8Array, declaredSize: number) =>
  collect((archive) => {
    const file: ZipInputFile = { filename: name, size: declaredSize, crc: 0, compression: 8 }
    archive.add(file)
    file.ondata!(null, new Uint8Array(deflated), true)
  })

export const tar = (entries: ReadonlyArray<TarEntry>) => Effect.promise(() => packTar(entries))

export const tarGz = (entries: ReadonlyArray<TarEntry>) => Effect.map(tar(entries), (bytes) => gzipSync(bytes))

/** A ustar header for one regular file of `size` bytes, with its checksum. */
const tarHeader = (name: string, size: number) => {
  const header = new Uint8Array(512)
  const put = (at: number, value: string) => header.set(strToU8(value), at)
  put(0, name)
  put(100, "0000644\0")
  put(108, "0000000\0")
  put(116, "0000000\0")
  put(124, size.toString(8).padStart(11, "0") + "\0")
  put(136, "00000000000\0")
  put(156, "0")
  put(257, "ustar\0")
  put(263, "00")
  put(148, "        ")
  const sum = header.reduce((total, byte) => total + byte, 0)
  put(148, sum.toString(8).padStart(6, "0") + "\0 ")
  return header
}

/** A .tar.gz of one file of `zeroMiB` MiB of zeros: a few hundred KiB packed. */
export const tarGzBomb = (zeroMiB: number) => {
  const deflated = deflatedZeros(zeroMiB, tarHeader("bomb.bin", zeroMiB * MiB))
  // gzip: header, the deflate stream, then CRC and size (left zero: a reader that stops early never gets there).
  return Buffer.concat([Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3]), deflated, Buffer.alloc(8)])
}

/** A fresh directory, removed when the test's scope closes. */
export const tempDir = Effect.acquireRelease(
  Effect.promise(() => fs.mkdtemp(join(tmpdir(), "cairn-skill-hub-"))),
  (dir) => Effect.promise(() => fs.rm(dir, { recursive: true, force: true }))
)
