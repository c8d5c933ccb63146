/**
 * The SkillHub port on a catalog directory: the offline default, `DATA_DIR/hub/` (or `HUB_DIR`). The format:
 *
 *   <dir>/<slug>/<version>/   the unpacked skill folder, SKILL.md at its root; <version> is a semver string
 *   <dir>/<slug>/hub.json     optional: {displayName?, summary?, category?, tags?, owner?, featured?, installs?}
 *
 * A slug is lowercase letters, digits and `-` (ClawHub's); any other entry in the directory is ignored, as is a
 * version folder whose name is not exact semver. A field hub.json leaves out falls back to the newest version's
 * SKILL.md front matter (`name` for displayName, `description` for summary), then to the slug and "". The newest
 * version is the highest semver. A skill's createdAt and updatedAt are its oldest and newest version folders'
 * modification times, and each version's createdAt is its folder's. A missing or empty directory is an empty
 * catalog. A download is read from disk under the same rules as an uploaded archive (BundleRules.ts) and never
 * follows a symbolic link. testing/RegistryServer.ts serves this same format over ClawHub's protocol.
 */
import type { ValidationFailed } from "@cairn/domain"
import { Effect, Layer, Option, Schema } from "effect"
import { constants, type Dirent, type Stats } from "node:fs"
import * as fs from "node:fs/promises"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import valid from "semver/functions/valid.js"
import rsort from "semver/functions/rsort.js"
import { parse as parseYaml } from "yaml"
import * as BundleRules from "../BundleRules.ts"
import {
  type BundleFile,
  type HubPage,
  type HubQuery,
  type HubSkill,
  HubSkillNotFound,
  type HubVersion,
  pageSize,
  SkillHub,
  SkillHubUnavailable
} from "../SkillHub.ts"

export interface Options {
  readonly dir: string
  readonly limits?: Partial<BundleRules.Limits>
}

export const isSlug = (slug: string) => slug.length <= 96 && /^[a-z0-9][a-z0-9-]*$/.test(slug)

const HubJson = Schema.Struct({
  displayName: Schema.optionalKey(Schema.String),
  summary: Schema.optionalKey(Schema.String),
  category: Schema.optionalKey(Schema.String),
  tags: Schema.optionalKey(Schema.Array(Schema.String)),
  owner: Schema.optionalKey(Schema.String),
  featured: Schema.optionalKey(Schema.Boolean),
  installs: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)))
})
type HubJson = typeof HubJson.Type

/** What `<slug>/hub.json` may say about a skill. */
export type HubFields = HubJson

const Cursor = Schema.fromJsonString(Schema.Struct({ offset: Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)) }))

export const encodeCursor = (offset: number) => Buffer.from(JSON.stringify({ offset })).toString("base64url")

/** The offset a cursor carries; a cursor this catalog did not make is past the end, so a client's paging stops. */
const decodeCursor = (cursor: string | undefined) =>
  cursor === undefined || cursor === ""
    ? 0
    : Option.match(Schema.decodeUnknownOption(Cursor)(Buffer.from(cursor, "base64url").toString()), {
      onNone: () => Number.POSITIVE_INFINITY,
      onSome: ({ offset }) => offset
    })

const hasCode = (error: unknown, ...codes: ReadonlyArray<string>) =>
  typeof error === "object" && error !== null && codes.includes((error as { code?: unknown }).code as string)

// Small metadata files; anything larger is not what the format describes.
const MAX_METADATA_BYTES = 1024 * 1024

const byName = (a: Dirent, b: Dirent) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)

/** Front matter between the leading `---` lines of a SKILL.md, as a record; anything unreadable is empty. */
export const frontMatter = (text: string): Readonly<Record<string, unknown>> => {
  const match = /^---\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/.exec(text.replace(/^\uFEFF/, ""))
  if (match === null) return {}
  try {
    const parsed: unknown = parseYaml(match[1]!)
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? parsed as Record<string, unknown> : {}
  } catch {
    return {}
  }
}

const textOf = (value: unknown) => (typeof value === "string" && value.trim() !== "" ? value.trim() : undefined)

const matches = (skill: HubSkill, q: string) =>
  [skill.slug, skill.name, skill.summary, ...skill.tags].some((field) => field.toLowerCase().includes(q))

const orderings: Record<NonNullable<HubQuery["sort"]>, (a: HubSkill, b: HubSkill) => number> = {
  popular: (a, b) => b.installs - a.installs || a.slug.localeCompare(b.slug),
  newest: (a, b) => b.updatedAt.localeCompare(a.updatedAt) || a.slug.localeCompare(b.slug),
  name: (a, b) => a.name.localeCompare(b.name) || a.slug.localeCompare(b.slug)
}

const listing = ({ versions: _, ...skill }: HubSkill): HubSkill => skill

export const make = (options: Options) =>
  Effect.sync(() => {
    const registry = pathToFileURL(options.dir).href
    const limits = BundleRules.limitsWith(options.limits)
    const unavailable = (cause: unknown) => new SkillHubUnavailable({ registry, cause })
    const io = <A>(run: () => Promise<A>) => Effect.tryPromise({ try: run, catch: unavailable })

    /** A folder's entries; a folder that is not there has none. */
    const entriesOf = (path: string) =>
      io(() =>
        fs.readdir(path, { withFileTypes: true }).catch((error: unknown) => {
          if (hasCode(error, "ENOENT", "ENOTDIR")) return [] as Array<Dirent>
          throw error
        })
      ).pipe(Effect.map((entries) => entries.sort(byName)))

    /** A small regular file's text, or undefined when it is absent or not a plain file. */
    const smallText = (path: string) =>
      io(async () => {
        const stat = await fs.lstat(path).catch((error: unknown) => {
          if (hasCode(error, "ENOENT", "ENOTDIR")) return undefined
          throw error
        })
        if (stat === undefined || !stat.isFile() || stat.size > MAX_METADATA_BYTES) return undefined
        return fs.readFile(path, "utf8")
      })

    const hubJson = (slug: string) =>
      Effect.flatMap(smallText(join(options.dir, slug, "hub.json")), (text) => {
        if (text === undefined) return Effect.succeed<HubJson>({})
        let json: unknown
        try {
          json = JSON.parse(text)
        } catch {
          json = undefined
        }
        return Schema.decodeUnknownEffect(HubJson)(json).pipe(
          Effect.catch((error) =>
            Effect.as(Effect.logWarning(`Ignoring ${slug}/hub.json in the skill catalog: it is not valid`, error), {} as HubJson)
          )
        )
      })

    /** A skill's listing with its versions, newest first; undefined when it has no version. */
    const readSkill = (slug: string) =>
      Effect.gen(function*() {
        const names = (yield* entriesOf(join(options.dir, slug)))
          .filter((entry) => entry.isDirectory() && valid(entry.name) === entry.name)
          .map((entry) => entry.name)
        if (names.length === 0) return undefined
        const newestFirst = rsort(names)
        const stats: ReadonlyArray<Stats> = yield* Effect.forEach(newestFirst, (version) =>
          io(() => fs.lstat(join(options.dir, slug, version))))
        const versions: ReadonlyArray<HubVersion> = newestFirst.map((version, index) => ({
          version,
          createdAt: stats[index]!.mtime.toISOString(),
          changelog: ""
        }))
        const times = stats.map((stat) => stat.mtimeMs)
        const hub = yield* hubJson(slug)
        const latest = newestFirst[0]!
        const skillMd = yield* smallText(join(options.dir, slug, latest, "SKILL.md"))
        const front = skillMd === undefined ? {} : frontMatter(skillMd)
        const skill: HubSkill = {
          slug,
          name: hub.displayName ?? textOf(front["name"]) ?? slug,
          summary: hub.summary ?? textOf(front["description"]) ?? "",
          version: latest,
          owner: hub.owner ?? null,
          category: hub.category ?? null,
          tags: hub.tags ?? [],
          installs: hub.installs ?? 0,
          featured: hub.featured ?? false,
          createdAt: new Date(Math.min(...times)).toISOString(),
          updatedAt: new Date(Math.max(...times)).toISOString(),
          versions
        }
        return skill
      })

    const allSkills = Effect.gen(function*() {
      const slugs = (yield* entriesOf(options.dir)).filter((entry) => entry.isDirectory() && isSlug(entry.name))
      const skills = yield* Effect.forEach(slugs, (entry) => readSkill(entry.name), { concurrency: 8 })
      return skills.filter((skill): skill is HubSkill => skill !== undefined)
    })

    const search = (query: HubQuery): Effect.Effect<HubPage, SkillHubUnavailable> =>
      Effect.map(allSkills, (skills) => {
        const q = query.q?.trim().toLowerCase() ?? ""
        const category = query.category?.trim().toLowerCase() ?? ""
        const found = skills
          .filter((skill) => q === "" || matches(skill, q))
          .filter((skill) => category === "" || skill.category?.toLowerCase() === category)
          .sort(orderings[query.sort ?? "popular"])
        const offset = decodeCursor(query.cursor)
        const end = offset + pageSize(query.limit)
        return {
          skills: found.slice(offset, end).map(listing),
          nextCursor: end < found.length ? encodeCursor(end) : null
        }
      })

    const get = (slug: string): Effect.Effect<HubSkill, HubSkillNotFound | SkillHubUnavailable> =>
      isSlug(slug)
        ? Effect.flatMap(readSkill(slug), (skill) => skill === undefined ? Effect.fail(new HubSkillNotFound({ slug })) : Effect.succeed(skill))
        : Effect.fail(new HubSkillNotFound({ slug }))

    /** Reads a file without following a link, refusing it once it is past the budget's room. */
    const readFile = (path: string, name: string, room: number) =>
      Effect.tryPromise({
        try: async () => {
          // O_NOFOLLOW closes the gap between listing the folder and opening the file (POSIX only).
          const handle = await fs.open(path, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0))
          try {
            const stat = await handle.stat()
            if (!stat.isFile()) return "special" as const
            if (stat.size > room) return "over" as const
            const content = await handle.readFile()
            return content.length > room ? "over" as const : new Uint8Array(content.buffer, content.byteOffset, content.length)
          } finally {
            await handle.close()
          }
        },
        catch: (cause): ValidationFailed | SkillHubUnavailable =>
          hasCode(cause, "ELOOP") ? BundleRules.wrongKind(name, "symlink") : unavailable(cause)
      }).pipe(
        Effect.flatMap((read) =>
          read === "over"
            ? Effect.fail(BundleRules.unpacksTooLarge(limits))
            : read === "special"
            ? Effect.fail(BundleRules.wrongKind(name, "special"))
            : Effect.succeed(read)
        )
      )

    const readBundle = (root: string) =>
      Effect.gen(function*() {
        const budget = BundleRules.budget(limits)
        const files: Array<BundleFile> = []
        const walk = (folder: string): Effect.Effect<void, ValidationFailed | SkillHubUnavailable> =>
          Effect.gen(function*() {
            for (const entry of yield* entriesOf(join(root, folder))) {
              const name = folder === "" ? entry.name : `${folder}/${entry.name}`
              const kind: BundleRules.EntryKind = entry.isSymbolicLink()
                ? "symlink"
                : entry.isDirectory()
                ? "directory"
                : entry.isFile()
                ? "file"
                : "special"
              const path = yield* Effect.fromResult(BundleRules.checkEntry(name, kind))
              if (path === undefined) {
                yield* walk(name)
                continue
              }
              if (files.length >= limits.maxFiles) return yield* BundleRules.tooManyFiles(limits)
              const content = yield* readFile(join(root, name), name, budget.room())
              yield* Effect.fromResult(budget.admit(content.length))
              files.push({ path, content })
            }
          })
        yield* walk("")
        return yield* Effect.fromResult(BundleRules.finish(files))
      })

    const download = (slug: string, version?: string) =>
      Effect.gen(function*() {
        const skill = yield* get(slug)
        const wanted = version ?? skill.version
        if (!skill.versions?.some((known) => known.version === wanted)) {
          return yield* new HubSkillNotFound({ slug, version: wanted })
        }
        const files = yield* readBundle(join(options.dir, slug, wanted))
        return { slug, version: wanted, files }
      })

    return SkillHub.of({ registry, search, get, download })
  })

export const layer = (options: Options) => Layer.effect(SkillHub, make(options))
