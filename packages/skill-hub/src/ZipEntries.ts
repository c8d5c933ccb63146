/**
 * Reads a zip's entries from its central directory: the authoritative list, and the only place a zip records an
 * entry's Unix mode, which is how a symbolic link or a device is told from a file. Each file's data is found through
 * its local header and inflated within the bundle's byte budget (Inflating.ts); the declared sizes are only checked
 * against what actually came out. Zip64 is refused: a bundle within the limits never needs it.
 */
import type { ValidationFailed } from "@cairn/domain"
import { Result } from "effect"
import { type Budget, corrupt, type EntryKind, type Limits, reject, unpacksTooLarge } from "./BundleRules.ts"
import * as Inflating from "./Inflating.ts"

export interface ZipEntry {
  readonly name: string
  readonly kind: EntryKind
  readonly method: number
  readonly encrypted: boolean
  readonly compressedSize: number
  readonly size: number
  readonly localOffset: number
}

const END_OF_DIRECTORY = 0x06054b50
const DIRECTORY_ENTRY = 0x02014b50
const LOCAL_HEADER = 0x04034b50

const S_IFMT = 0o170000
const kindsByMode: Record<number, EntryKind> = {
  0o100000: "file",
  0o040000: "directory",
  0o120000: "symlink",
  0o020000: "special", // character device
  0o060000: "special", // block device
  0o010000: "special", // fifo
  0o140000: "special" // socket
}

// Unix tools keep the mode in the high half of the external attributes; DOS tools leave it 0 and set bit 4 on folders.
const kindOf = (name: string, external: number): EntryKind => {
  const mode = (external >>> 16) & S_IFMT
  if (mode !== 0) return kindsByMode[mode] ?? "special"
  return name.endsWith("/") || (external & 0x10) !== 0 ? "directory" : "file"
}

const names = new TextDecoder("utf-8", { fatal: true })

/** The end-of-central-directory record sits in the last 22 bytes plus a comment of at most 64 KiB. */
const findEnd = (view: DataView): number | undefined => {
  for (let at = view.byteLength - 22; at >= Math.max(0, view.byteLength - 22 - 0xffff); at--) {
    if (view.getUint32(at, true) === END_OF_DIRECTORY) return at
  }
  return undefined
}

export const entries = (bytes: Uint8Array): Result.Result<ReadonlyArray<ZipEntry>, ValidationFailed> => {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const end = findEnd(view)
  if (end === undefined) return Result.fail(corrupt("no central directory"))
  const count = view.getUint16(end + 10, true)
  const directorySize = view.getUint32(end + 12, true)
  let at = view.getUint32(end + 16, true)
  if (count === 0xffff || directorySize === 0xffffffff || at === 0xffffffff) {
    return Result.fail(reject("zip64 archives are not supported"))
  }
  if (at + directorySize > end) return Result.fail(corrupt("the central directory is out of bounds"))
  const found: Array<ZipEntry> = []
  for (let index = 0; index < count; index++) {
    if (at + 46 > end || view.getUint32(at, true) !== DIRECTORY_ENTRY) {
      return Result.fail(corrupt("a central directory entry is damaged"))
    }
    const nameLength = view.getUint16(at + 28, true)
    const skip = 46 + nameLength + view.getUint16(at + 30, true) + view.getUint16(at + 32, true)
    if (at + skip > end) return Result.fail(corrupt("a central directory entry is out of bounds"))
    let name: string
    try {
      name = names.decode(bytes.subarray(at + 46, at + 46 + nameLength))
    } catch {
      return Result.fail(reject("an archive entry's name is not UTF-8"))
    }
    const compressedSize = view.getUint32(at + 20, true)
    const size = view.getUint32(at + 24, true)
    const localOffset = view.getUint32(at + 42, true)
    if (compressedSize === 0xffffffff || size === 0xffffffff || localOffset === 0xffffffff) {
      return Result.fail(reject("zip64 archives are not supported"))
    }
    found.push({
      name,
      kind: kindOf(name, view.getUint32(at + 38, true)),
      method: view.getUint16(at + 10, true),
      encrypted: (view.getUint16(at + 8, true) & 1) !== 0,
      compressedSize,
      size,
      localOffset
    })
    at += skip
  }
  return Result.succeed(found)
}

/** A file entry's contents, inflated within the budget's room. */
export const content = (
  bytes: Uint8Array,
  entry: ZipEntry,
  budget: Budget,
  limits: Limits
): Result.Result<Uint8Array, ValidationFailed> => {
  const shown = JSON.stringify(entry.name)
  if (entry.encrypted) return Result.fail(reject(`the bundle's ${shown} is encrypted`))
  if (entry.method !== 0 && entry.method !== 8) {
    return Result.fail(reject(`the bundle's ${shown} uses compression method ${entry.method}, not deflate`))
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const header = entry.localOffset
  if (header + 30 > bytes.length || view.getUint32(header, true) !== LOCAL_HEADER) {
    return Result.fail(corrupt(`${shown} has no local header`))
  }
  const start = header + 30 + view.getUint16(header + 26, true) + view.getUint16(header + 28, true)
  const data = bytes.subarray(start, start + entry.compressedSize)
  if (data.length !== entry.compressedSize) return Result.fail(corrupt(`${shown} is truncated`))
  const inflated = entry.method === 0
    ? (data.length > budget.room() ? Result.fail("over" as const) : Result.succeed(data.slice()))
    : Inflating.inflate(data, budget.room())
  if (Result.isFailure(inflated)) {
    return Result.fail(inflated.failure === "over" ? unpacksTooLarge(limits) : corrupt(`${shown} does not inflate`))
  }
  return inflated.success.length === entry.size
    ? Result.succeed(inflated.success)
    : Result.fail(corrupt(`${shown} is not the size its header says`))
}
