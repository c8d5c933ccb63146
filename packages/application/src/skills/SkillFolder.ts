/**
 * A skill folder's files, checked: relative paths only, no links, within the limits, and a SKILL.md whose YAML
 * front matter names the skill (letters, digits, `-`, `_`) and describes it. `.env.example` lists the variables
 * the skill needs, each described by the comment lines above it. Folders come from the content store (a CID),
 * an uploaded archive or a hub download; all go through here.
 */
import { ContentStore, type DirectoryEntry } from "@cairn/content-store"
import { Bytes, Skill, ValidationFailed } from "@cairn/domain"
import { BundleRules } from "@cairn/skill-hub"
import { Effect, Result } from "effect"
import * as Yaml from "yaml"

export interface FolderFile {
  readonly path: string
  readonly content: Uint8Array
}

/** What SKILL.md and `.env.example` say. */
export interface SkillManifest {
  readonly name: string
  readonly description: string
  readonly version: string | undefined
  readonly envVars: ReadonlyArray<Skill.EnvVar>
}

// One set of bundle rules for every way a skill arrives: the hub's (archives, catalogs) serve folders by CID too.
const limits = BundleRules.defaultLimits

/** A path inside the folder: a `RelativePath`, as written (no leading `./` or trailing `/` for the bundle rules to strip). */
export const checkPath = (path: string): Result.Result<string, ValidationFailed> =>
  Result.flatMap(BundleRules.checkEntry(path, "file"), (kept) =>
    kept === path ? Result.succeed(path) : Result.fail(BundleRules.reject(`the bundle's ${JSON.stringify(path)} has an empty or . segment`)))

const decoder = new TextDecoder("utf-8", { fatal: false })

/** The YAML front matter of a Markdown document: the block between the first two `---` lines. */
const frontMatter = (text: string): Result.Result<Record<string, unknown>, ValidationFailed> => {
  const match = /^\uFEFF?---\r?\n([\s\S]*?)\r?\n---\s*(\r?\n|$)/.exec(text)
  if (match === null) return Result.fail(BundleRules.reject("SKILL.md must start with YAML front matter between --- lines"))
  try {
    const parsed: unknown = Yaml.parse(match[1]!)
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)
      ? Result.succeed(parsed as Record<string, unknown>)
      : Result.fail(BundleRules.reject("SKILL.md front matter must be a YAML mapping"))
  } catch (error) {
    return Result.fail(BundleRules.reject(`SKILL.md front matter is not valid YAML (${(error as Error).message.split("\n")[0]})`))
  }
}

/** `NAME=value` lines of `.env.example`; the `#` comments right above a line describe it. */
export const envVarsOf = (text: string): ReadonlyArray<Skill.EnvVar> => {
  const vars: Array<Skill.EnvVar> = []
  let comments: Array<string> = []
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim()
    if (line.startsWith("#")) {
      comments.push(line.replace(/^#+\s*/, ""))
      continue
    }
    const match = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=/.exec(line)
    if (match !== null && !vars.some((v) => v.name === match[1])) {
      const description = comments.join(" ").trim()
      vars.push(description === "" ? { name: match[1]! } : { name: match[1]!, description })
    }
    comments = []
  }
  return vars
}

const versionOf = (matter: Record<string, unknown>): string | undefined => {
  const metadata = matter["metadata"]
  const candidate = matter["version"] ??
    (typeof metadata === "object" && metadata !== null ? (metadata as Record<string, unknown>)["version"] : undefined)
  return typeof candidate === "string" || typeof candidate === "number" ? String(candidate) : undefined
}

/** Checks a whole folder and reads its manifest. */
export const manifestOf = (files: ReadonlyArray<FolderFile>): Result.Result<SkillManifest, ValidationFailed> =>
  Result.gen(function*() {
    const counted = BundleRules.budget(limits)
    for (const file of files) {
      yield* checkPath(file.path)
      yield* counted.admit(file.content.byteLength)
    }
    const seen = new Set<string>()
    for (const file of files) {
      if (seen.has(file.path)) return yield* Result.fail(BundleRules.reject(`the bundle has ${JSON.stringify(file.path)} twice`))
      seen.add(file.path)
    }
    const skillMd = files.find((f) => f.path === "SKILL.md")
    if (skillMd === undefined) return yield* Result.fail(BundleRules.reject("the skill folder has no SKILL.md at its root"))
    const matter = yield* frontMatter(decoder.decode(skillMd.content))
    const name = yield* Skill.validateName(matter["name"])
    const description = matter["description"]
    if (typeof description !== "string" || description.trim() === "") {
      return yield* Result.fail(BundleRules.reject("SKILL.md front matter needs a description"))
    }
    const envExample = files.find((f) => f.path === ".env.example")
    return {
      name,
      description: description.trim(),
      version: versionOf(matter),
      envVars: envExample === undefined ? [] : envVarsOf(decoder.decode(envExample.content))
    }
  })

const notAFolder = (cid: string) => BundleRules.reject(`skillCid ${cid} is not a folder stored on the public network`)

/**
 * The files under a folder CID of the public network, checked before any content is read: links are refused and
 * sizes capped from the listing, and each file's bytes are capped again while read.
 */
export const readFromStore = (content: ContentStore["Service"], cid: string) =>
  Effect.gen(function*() {
    const entries = yield* content.walk(cid, "public").pipe(
      Effect.catchTags({ ContentNotFound: () => Effect.fail(notAFolder(cid)), NotADirectory: () => Effect.fail(notAFolder(cid)) })
    )
    const files: Array<DirectoryEntry> = []
    const counted = BundleRules.budget(limits)
    for (const entry of entries) {
      yield* Effect.fromResult(checkPath(entry.path))
      if (entry.kind === "symlink") return yield* BundleRules.wrongKind(entry.path, "symlink")
      if (entry.kind !== "file") continue
      files.push(entry)
      yield* Effect.fromResult(counted.admit(entry.size))
    }
    return yield* Effect.forEach(files, (entry) =>
      Bytes.collectWithin(content.cat(entry.cid, "public"), limits.maxUnpackedBytes, () => BundleRules.reject(`"${entry.path}" is larger than the listing said`)).pipe(
        Effect.map((bytes): FolderFile => ({ path: entry.path, content: bytes })),
        Effect.catchTag("ContentNotFound", () => Effect.fail(notAFolder(cid)))
      ), { concurrency: 8 })
  })

/** Whether two folders hold the same files with the same bytes; else the paths that differ (sorted). */
export const changedPaths = (expected: ReadonlyArray<FolderFile>, actual: ReadonlyArray<FolderFile>): ReadonlyArray<string> => {
  const want = new Map(expected.map((f) => [f.path, f.content]))
  const have = new Map(actual.map((f) => [f.path, f.content]))
  const changed = new Set<string>()
  for (const [path, bytes] of want) {
    const other = have.get(path)
    if (other === undefined || !sameBytes(bytes, other)) changed.add(path)
  }
  for (const path of have.keys()) if (!want.has(path)) changed.add(path)
  return [...changed].sort()
}

const sameBytes = (a: Uint8Array, b: Uint8Array) => a.byteLength === b.byteLength && a.every((byte, i) => byte === b[i])
