/**
 * The rules every skill bundle obeys, whether it arrives as an archive (Archive.ts) or is read from a catalog folder
 * (LocalCatalog.ts): relative paths (the domain's `RelativePath` rule, once a leading `./` and a trailing `/` are
 * dropped), no links or special files, within the size and count limits. Folders are implied by the files' paths. A
 * bundle whose files all sit in one folder, with no SKILL.md beside that folder, is that folder
 * (`zip -r skill.zip my-skill/`). macOS's `__MACOSX/` resource forks are dropped, so a folder compressed in Finder is
 * read like any other.
 */
import { RelativePath, ValidationFailed } from "@cairn/domain"
import { Result } from "effect"
import type { BundleFile } from "./SkillHub.ts"

export interface Limits {
  /** The packed archive, as received. */
  readonly maxArchiveBytes: number
  /** All files' contents together, counted as they are inflated or read. */
  readonly maxUnpackedBytes: number
  readonly maxFiles: number
}

const MiB = 1024 * 1024

export const defaultLimits: Limits = { maxArchiveBytes: 10 * MiB, maxUnpackedBytes: 20 * MiB, maxFiles: 500 }

export const limitsWith = (overrides: Partial<Limits> = {}): Limits => ({ ...defaultLimits, ...overrides })

const size = (bytes: number) => bytes % MiB === 0 ? `${bytes / MiB} MiB` : `${bytes} bytes`

export const reject = (detail: string) => new ValidationFailed({ detail })

export const archiveTooLarge = (limits: Limits) => reject(`the archive is larger than ${size(limits.maxArchiveBytes)}`)
export const unpacksTooLarge = (limits: Limits) => reject(`the bundle unpacks to more than ${size(limits.maxUnpackedBytes)}`)
export const tooManyFiles = (limits: Limits) => reject(`the bundle has more than ${limits.maxFiles} files`)
export const corrupt = (why: string) => reject(`the archive is corrupt (${why})`)

/** What an archive entry or a directory entry is; only files and folders may be in a bundle. */
export type EntryKind = "file" | "directory" | "symlink" | "hardlink" | "special"

const kindRefusals = {
  symlink: "is a symbolic link",
  hardlink: "is a hard link",
  special: "is a device, fifo or socket"
} as const

// JSON quoting shows control characters escaped, so the message itself stays one clean line.
const refusal = (name: string, why: string) => reject(`the bundle's ${JSON.stringify(name)} ${why}`)
const refuse = (name: string, why: string) => Result.fail(refusal(name, why))

/** The refusal of an entry that is neither a file nor a folder. */
export const wrongKind = (name: string, kind: keyof typeof kindRefusals) => refusal(name, kindRefusals[kind])

/** A bundle path's refusal, in the words bundles have always used. */
const pathRefusal = (problem: RelativePath.Problem): string => {
  switch (problem.reason) {
    case "Nul":
    case "ControlCharacter":
      return "has a control character in its path"
    case "Backslash":
      return "has a backslash in its path"
    case "Absolute":
    case "DriveLetter":
      return "is an absolute path"
    case "DotDotSegment":
      return "leaves the bundle's folder (..)"
    case "DotSegment":
    case "EmptySegment":
      return "has an empty or . segment"
    case "Empty":
      return "has no file name"
    case "NotUnicode":
      return "has a path that is not valid Unicode"
    case "TooLong":
      return `has a path longer than ${RelativePath.maxBytes} bytes`
    case "SegmentTooLong":
      return `has a name longer than ${RelativePath.maxSegmentBytes} bytes in its path`
  }
}

/**
 * Checks one entry's kind and name: the path to keep (without a leading `./` or trailing `/`), or undefined for a
 * folder, which is implied by the files inside it. What is left once those are stripped is a `RelativePath`.
 */
export const checkEntry = (name: string, kind: EntryKind): Result.Result<string | undefined, ValidationFailed> => {
  if (kind !== "file" && kind !== "directory") return Result.fail(wrongKind(name, kind))
  // `tar -czf skill.tgz .` names every entry `./…`.
  const path = name.replace(/^(\.\/)+/, "").replace(/\/$/, "")
  if (path === "" || path === ".") {
    // `/` is the file system's root, not the bundle's.
    if (name.startsWith("/")) return refuse(name, "is an absolute path")
    return kind === "directory" ? Result.succeed(undefined) : refuse(name, "has no file name")
  }
  const checked = RelativePath.validate(path)
  if (Result.isFailure(checked)) return refuse(name, pathRefusal(checked.failure))
  return Result.succeed(kind === "directory" ? undefined : path)
}

/**
 * Counts files and bytes as a reader admits them, so it stops at the first file or byte over a limit whatever the
 * headers said.
 */
export interface Budget {
  /** Bytes still allowed before the unpacked limit. */
  readonly room: () => number
  /** Admits one more file of `bytes` bytes (already read or inflated within `room`). */
  readonly admit: (bytes: number) => Result.Result<void, ValidationFailed>
}

export const budget = (limits: Limits): Budget => {
  let files = 0
  let bytes = 0
  return {
    room: () => limits.maxUnpackedBytes - bytes,
    admit: (more) => {
      files += 1
      bytes += more
      if (files > limits.maxFiles) return Result.fail(tooManyFiles(limits))
      if (bytes > limits.maxUnpackedBytes) return Result.fail(unpacksTooLarge(limits))
      return Result.void
    }
  }
}

/**
 * The bundle as kept: without `__MACOSX/`, no path twice, no path both a file and a folder, and a single top folder
 * stripped when there is no SKILL.md at the root.
 */
export const finish = (all: ReadonlyArray<BundleFile>): Result.Result<ReadonlyArray<BundleFile>, ValidationFailed> => {
  const files = all.filter((file) => !file.path.startsWith("__MACOSX/"))
  const paths = new Set<string>()
  for (const file of files) {
    if (paths.has(file.path)) return Result.fail(reject(`the bundle has ${JSON.stringify(file.path)} twice`))
    paths.add(file.path)
  }
  for (const path of paths) {
    const segments = path.split("/")
    for (let depth = 1; depth < segments.length; depth++) {
      const folder = segments.slice(0, depth).join("/")
      if (paths.has(folder)) return Result.fail(reject(`the bundle's ${JSON.stringify(folder)} is both a file and a folder`))
    }
  }
  return Result.succeed(stripTopFolder(files))
}

const stripTopFolder = (files: ReadonlyArray<BundleFile>): ReadonlyArray<BundleFile> => {
  if (files.length === 0 || files.some((file) => file.path === "SKILL.md")) return files
  const top = files[0]!.path.split("/")[0]!
  const prefix = `${top}/`
  return files.every((file) => file.path.startsWith(prefix))
    ? files.map((file) => ({ path: file.path.slice(prefix.length), content: file.content }))
    : files
}
