/**
 * Skill bundle archives: reads a zip, a gzipped tar (`.tar.gz`, `.tgz`) or a plain tar into checked files
 * (BundleRules.ts: safe relative paths, no links or special files, within the limits, counted while inflating), and
 * writes the deterministic zip a registry serves. The format is told by the magic bytes, never by a file name.
 */
import type { ValidationFailed } from "@cairn/domain"
import { Effect } from "effect"
import { zipSync, type Zippable } from "fflate"
import * as BundleRules from "./BundleRules.ts"
import type { BundleFile } from "./SkillHub.ts"
import * as TarEntries from "./TarEntries.ts"
import * as ZipEntries from "./ZipEntries.ts"

export { defaultLimits, type Limits } from "./BundleRules.ts"

export type Format = "zip" | "tar.gz" | "tar"

const startsWith = (bytes: Uint8Array, magic: ReadonlyArray<number>, at = 0) =>
  bytes.length >= at + magic.length && magic.every((byte, index) => bytes[at + index] === byte)

/** The archive format by its magic bytes: `PK\x03\x04` (or an empty zip's `PK\x05\x06`), gzip's `\x1f\x8b`, `ustar`. */
export const detect = (bytes: Uint8Array): Format | undefined =>
  startsWith(bytes, [0x50, 0x4b, 0x03, 0x04]) || startsWith(bytes, [0x50, 0x4b, 0x05, 0x06])
    ? "zip"
    : startsWith(bytes, [0x1f, 0x8b])
    ? "tar.gz"
    : startsWith(bytes, [0x75, 0x73, 0x74, 0x61, 0x72], 257)
    ? "tar"
    : undefined

const readZip = (bytes: Uint8Array, limits: BundleRules.Limits) =>
  Effect.gen(function*() {
    const entries = yield* Effect.fromResult(ZipEntries.entries(bytes))
    // Every name and kind is checked before anything is inflated.
    const files = yield* Effect.forEach(entries, (entry) =>
      Effect.map(Effect.fromResult(BundleRules.checkEntry(entry.name, entry.kind)), (path) => ({ entry, path })))
    const budget = BundleRules.budget(limits)
    const kept: Array<BundleFile> = []
    for (const { entry, path } of files) {
      if (path === undefined) continue
      if (kept.length >= limits.maxFiles) return yield* BundleRules.tooManyFiles(limits)
      const content = yield* Effect.fromResult(ZipEntries.content(bytes, entry, budget, limits))
      yield* Effect.fromResult(budget.admit(content.length))
      kept.push({ path, content })
    }
    return kept
  })

const readTar = (bytes: Uint8Array, gzipped: boolean, limits: BundleRules.Limits) =>
  Effect.gen(function*() {
    const entries = yield* TarEntries.entries(bytes, gzipped, limits)
    const budget = BundleRules.budget(limits)
    const kept: Array<BundleFile> = []
    for (const entry of entries) {
      const path = yield* Effect.fromResult(BundleRules.checkEntry(entry.name, entry.kind))
      if (path === undefined) continue
      yield* Effect.fromResult(budget.admit(entry.data.length))
      kept.push({ path, content: entry.data })
    }
    return kept
  })

/** Unpacks a bundle archive; anything outside the rules is ValidationFailed (400 `Validation failed: …`). */
export const read = (
  bytes: Uint8Array,
  limits?: Partial<BundleRules.Limits>
): Effect.Effect<ReadonlyArray<BundleFile>, ValidationFailed> =>
  Effect.gen(function*() {
    const within = BundleRules.limitsWith(limits)
    if (bytes.length > within.maxArchiveBytes) return yield* BundleRules.archiveTooLarge(within)
    const format = detect(bytes)
    if (format === undefined) return yield* BundleRules.reject("the archive is not a zip or a gzipped tar")
    const files = format === "zip" ? yield* readZip(bytes, within) : yield* readTar(bytes, format === "tar.gz", within)
    return yield* Effect.fromResult(BundleRules.finish(files))
  })

// The zip epoch in local time: fflate writes DOS times in local time, so this is 1980-01-01 00:00 on every machine.
const FIXED_MTIME = new Date(1980, 0, 1)

/**
 * A zip of the files, byte-identical for the same files in any order: sorted paths, a fixed time, mode 0644,
 * folders implied by the paths.
 */
export const writeZip = (files: ReadonlyArray<BundleFile>): Uint8Array<ArrayBuffer> => {
  const entries: Zippable = {}
  for (const file of [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))) {
    entries[file.path] = [file.content, { mtime: FIXED_MTIME, os: 3, attrs: 0o100644 << 16, level: 6 }]
  }
  return zipSync(entries)
}
