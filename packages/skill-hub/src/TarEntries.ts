/**
 * Reads a tar, gzipped or not, with modern-tar (web streams only, so it runs on Node, Bun and Deno). The gzip layer
 * is inflated first within a cap (Inflating.ts), so a bomb stops there: the cap is the unpacked limit plus room for
 * the tar's own headers, long-name records and padding. Headers are checksummed (strict mode), and a header whose
 * size runs past the end fails as truncated rather than being believed.
 */
import type { ValidationFailed } from "@cairn/domain"
import { Effect, Result } from "effect"
import { unpackTar } from "modern-tar"
import { corrupt, type EntryKind, type Limits, unpacksTooLarge } from "./BundleRules.ts"
import * as Inflating from "./Inflating.ts"

export interface TarEntry {
  readonly name: string
  readonly kind: EntryKind
  readonly data: Uint8Array
}

const kinds: Record<string, EntryKind> = {
  file: "file",
  directory: "directory",
  symlink: "symlink",
  link: "hardlink"
}

// A header block, a PAX record and padding for each file, with room to spare.
const TAR_OVERHEAD_PER_FILE = 4096

export const entries = (
  bytes: Uint8Array,
  gzipped: boolean,
  limits: Limits
): Effect.Effect<ReadonlyArray<TarEntry>, ValidationFailed> =>
  Effect.gen(function*() {
    let tar = bytes
    if (gzipped) {
      const inflated = Inflating.gunzip(bytes, limits.maxUnpackedBytes + limits.maxFiles * TAR_OVERHEAD_PER_FILE)
      if (Result.isFailure(inflated)) {
        return yield* inflated.failure === "over" ? unpacksTooLarge(limits) : corrupt("the gzip stream does not inflate")
      }
      tar = inflated.success
    }
    const parsed = yield* Effect.tryPromise({
      try: () => unpackTar(tar, { strict: true }),
      catch: (error) => corrupt(error instanceof Error ? error.message : "unreadable tar")
    })
    return parsed.map(({ data, header }) => ({
      name: header.name,
      // Devices, fifos and any type modern-tar does not name are refused alike.
      kind: kinds[header.type ?? "file"] ?? "special",
      data: data ?? new Uint8Array(0)
    }))
  })
