/**
 * A real ClawHub-compatible registry: node:http on 127.0.0.1 at a random port, serving a catalog directory in
 * LocalCatalog's format (read through LocalCatalog, so the format lives in one place; zips from Archive.writeZip).
 * It answers what OpenClaw's installer (`openclaw skills install <slug> [--version X]`, RPC `skills.install`) and
 * the `clawhub` CLI ask for, in the shapes of clawhub's `docs/http-api.md`:
 *
 *   GET  /api/v1/skills?sort=&cursor=&limit=&category=     {items, nextCursor}   (category is Cairn's extension)
 *   GET  /api/v1/search?q=&limit=                           {results}             (q `*` or empty lists all)
 *   GET  /api/v1/trending?kind=skills&limit=                {items}               (`openclaw skills search` with no query)
 *   GET  /api/v1/skills/<slug>                              {skill, latestVersion, metadata, owner, moderation}
 *   GET  /api/v1/skills/<slug>/install                      {ok, slug, installKind: "archive", archive: {version, downloadUrl}}
 *   GET  /api/v1/skills/<slug>/versions                     {items, nextCursor}
 *   GET  /api/v1/skills/<slug>/versions/<version>           {skill, version: {…, files: [{path, size, sha256}]}}
 *   GET  /api/v1/skills/<slug>/verify?version=|tag=         the clawhub.skill.verify.v1 envelope
 *   POST /api/v1/skills/-/security-verdicts {items}         clawhub.skill.security-verdicts.v1
 *   GET  /api/v1/download?slug=&version=|tag=               the zip
 *   GET  /api/v1/resolve?slug=&hash=                        {slug, match, latestVersion} by the clawhub CLI's fingerprint
 *   GET  /.well-known/clawhub.json, POST /api/cli/telemetry/install
 *
 * Errors are plain text, as ClawHub's are. `ownerHandle` is accepted and ignored (a catalog has one skill per slug),
 * and a skill whose hub.json names no owner is published under `owner` (`local`).
 * Every verdict passes unless `verdict` says otherwise, `archive` can replace a zip (tests of a hostile registry),
 * and `onRequest` sees each request.
 */
import { Effect, Result, type Scope } from "effect"
import { createHash } from "node:crypto"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import * as Archive from "../Archive.ts"
import * as LocalCatalog from "../node/LocalCatalog.ts"
import type { BundleFile, HubQuery, HubSkill } from "../SkillHub.ts"

export interface Verdict {
  readonly decision: string
  readonly reasons?: ReadonlyArray<string>
}

export interface Options {
  readonly dir: string
  /** Bytes to serve instead of the catalog's zip of that version. */
  readonly archive?: (slug: string, version: string) => Uint8Array | undefined
  /** The verdict to give instead of "pass". */
  readonly verdict?: (slug: string, version: string) => Verdict | undefined
  /** Sees each request as it arrives (its method, URL and headers). */
  readonly onRequest?: (request: IncomingMessage) => void
  /**
   * The publisher handle of a skill whose hub.json names no owner: `local` unless given. ClawHub skills always have
   * one, and OpenClaw lists and installs them as `@owner/slug`.
   */
  readonly owner?: string
}

export interface Server {
  /** The base URL, such as `http://127.0.0.1:41234`: give it to a client as `CLAWHUB_URL` or `OPENCLAW_CLAWHUB_URL`. */
  readonly url: string
  /** Stops listening and drops open connections; the scope's end does it too. */
  readonly close: Effect.Effect<void>
}

class HttpError {
  readonly status: number
  readonly message: string
  constructor(status: number, message: string) {
    this.status = status
    this.message = message
  }
}

const ms = (iso: string) => Date.parse(iso)

const sha256 = (bytes: Uint8Array | string) => createHash("sha256").update(bytes).digest("hex")

/** The clawhub CLI's bundle fingerprint: files outside dot folders, `path:sha256` lines sorted by path. */
export const fingerprint = (files: ReadonlyArray<BundleFile>) =>
  sha256(
    files
      .filter((file) => !file.path.split("/").some((segment) => segment.startsWith(".")))
      .map((file) => ({ path: file.path, sha256: sha256(file.content) }))
      .sort((a, b) => a.path.localeCompare(b.path))
      .map((file) => `${file.path}:${file.sha256}`)
      .join("\n")
  )

/** ClawHub's list sorts, onto the catalog's three; null is an unknown sort (400). */
const sortOf = (value: string | null): NonNullable<HubQuery["sort"]> | null => {
  switch ((value ?? "updated").trim().toLowerCase()) {
    case "updated":
    case "newest":
    case "createdat":
    case "created-at":
      return "newest"
    case "name":
      return "name"
    case "downloads":
    case "installs":
    case "installscurrent":
    case "installsalltime":
    case "recommended":
    case "default":
    case "trending":
    case "stars":
    case "rating":
      return "popular"
    default:
      return null
  }
}

const stats = (skill: HubSkill) => ({
  downloads: skill.installs,
  installsAllTime: skill.installs,
  installsCurrent: skill.installs,
  stars: 0,
  versions: skill.versions?.length ?? 1,
  comments: 0
})

const latestVersion = (skill: HubSkill) => {
  const latest = skill.versions?.find((known) => known.version === skill.version)
  return { version: skill.version, createdAt: ms(latest?.createdAt ?? skill.updatedAt), changelog: latest?.changelog ?? "", license: null }
}

/** The fields a detail and a list item share; `category` and `featured` are Cairn's additions. */
const skillFields = (skill: HubSkill) => ({
  slug: skill.slug,
  displayName: skill.name,
  summary: skill.summary,
  description: null,
  topics: skill.tags,
  tags: { latest: skill.version },
  stats: stats(skill),
  createdAt: ms(skill.createdAt),
  updatedAt: ms(skill.updatedAt),
  category: skill.category,
  featured: skill.featured
})

const readBody = (request: IncomingMessage, max: number) =>
  new Promise<string>((resolve, reject) => {
    const chunks: Array<Buffer> = []
    let size = 0
    request.on("data", (chunk: Buffer) => {
      size += chunk.length
      if (size > max) reject(new HttpError(413, "Payload too large"))
      else chunks.push(chunk)
    })
    request.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    request.on("error", reject)
  })

const send = (response: ServerResponse, status: number, body: string | Uint8Array, type: string, headers = {}) => {
  response.writeHead(status, { "content-type": type, "content-length": Buffer.byteLength(body), ...headers })
  response.end(body)
}

const sendJson = (response: ServerResponse, body: unknown) => send(response, 200, JSON.stringify(body), "application/json")

export const serve = (options: Options): Effect.Effect<Server, never, Scope.Scope> =>
  Effect.gen(function*() {
    const hub = yield* LocalCatalog.make({ dir: options.dir })
    const publisherOf = (skill: HubSkill) => skill.owner ?? options.owner ?? "local"
    const owner = (skill: HubSkill) => ({ handle: publisherOf(skill), displayName: publisherOf(skill), image: null })
    const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(Effect.result(effect))
    let origin = ""

    const skillOr404 = async (slug: string) => {
      const found = await run(hub.get(slug))
      if (Result.isFailure(found)) {
        if (found.failure._tag === "HubSkillNotFound") throw new HttpError(404, "Skill not found")
        throw found.failure
      }
      return found.success
    }

    /** The version a request names (`version`, or `tag=latest`, or none for the newest). */
    const versionOf = (skill: HubSkill, params: URLSearchParams) => {
      const version = params.get("version")?.trim() || undefined
      const tag = params.get("tag")?.trim() || undefined
      if (version !== undefined && tag !== undefined) throw new HttpError(400, "Use either version or tag")
      if (tag !== undefined && tag !== "latest") throw new HttpError(404, "Version not found")
      const wanted = version ?? skill.version
      if (!skill.versions?.some((known) => known.version === wanted)) throw new HttpError(404, "Version not found")
      return wanted
    }

    const filesOf = async (slug: string, version: string) => {
      const bundle = await run(hub.download(slug, version))
      if (Result.isFailure(bundle)) throw bundle.failure
      return bundle.success.files
    }

    const list = async (params: URLSearchParams) => {
      const sort = sortOf(params.get("sort"))
      if (sort === null) throw new HttpError(400, "Invalid sort query parameter")
      const cursor = params.get("cursor") ?? undefined
      const category = params.get("category") ?? undefined
      const page = await run(hub.search({
        sort,
        limit: Number(params.get("limit") ?? 20),
        ...(cursor === undefined ? {} : { cursor }),
        ...(category === undefined ? {} : { category })
      }))
      if (Result.isFailure(page)) throw page.failure
      // A listing carries no version history, so each item's latest version date is its update time.
      return {
        items: page.success.skills.map((skill) => ({
          ...skillFields(skill),
          latestVersion: latestVersion(skill),
          metadata: null,
          owner: owner(skill)
        })),
        nextCursor: page.success.nextCursor
      }
    }

    const search = async (params: URLSearchParams) => {
      const q = params.get("q")?.trim() ?? ""
      const page = await run(hub.search({ ...(q === "" || q === "*" ? {} : { q }), limit: Number(params.get("limit") ?? 20) }))
      if (Result.isFailure(page)) throw page.failure
      return {
        results: page.success.skills.map((skill, index) => ({
          score: 1 / (index + 1),
          slug: skill.slug,
          source: "clawhub",
          displayName: skill.name,
          summary: skill.summary,
          version: skill.version,
          updatedAt: ms(skill.updatedAt),
          downloads: skill.installs,
          featured: skill.featured,
          ownerHandle: publisherOf(skill),
          owner: owner(skill)
        }))
      }
    }

    /** OpenClaw's `skills search` without a query lists these: the most installed first. */
    const trending = async (params: URLSearchParams) => {
      const page = await run(hub.search({ sort: "popular", limit: Number(params.get("limit") ?? 20) }))
      if (Result.isFailure(page)) throw page.failure
      return {
        items: page.success.skills.map((skill) => ({
          slug: skill.slug,
          displayName: skill.name,
          summary: skill.summary,
          source: "clawhub",
          install: { kind: "clawhub", reference: `@${publisherOf(skill)}/${skill.slug}`, sourceUrl: null },
          official: false,
          publisher: { kind: "user", handle: publisherOf(skill), displayName: publisherOf(skill), image: null, official: false },
          metrics: { rolling60DayInstalls: skill.installs, bookmarks: null, updatedAt: ms(skill.updatedAt) }
        })),
        nextCursor: null
      }
    }

    const detail = (skill: HubSkill) => ({
      skill: skillFields(skill),
      latestVersion: latestVersion(skill),
      metadata: null,
      owner: owner(skill),
      moderation: null
    })

    const passing = (skill: HubSkill, version: string): Verdict =>
      options.verdict?.(skill.slug, version) ?? { decision: "pass", reasons: [] }

    const verify = async (skill: HubSkill, params: URLSearchParams) => {
      const version = versionOf(skill, params)
      const verdict = passing(skill, version)
      const files = await filesOf(skill.slug, version)
      const created = skill.versions?.find((known) => known.version === version)?.createdAt ?? skill.updatedAt
      return {
        schema: "clawhub.skill.verify.v1",
        ok: verdict.decision === "pass",
        decision: verdict.decision,
        reasons: verdict.reasons ?? [],
        slug: skill.slug,
        displayName: skill.name,
        pageUrl: `${origin}/api/v1/skills/${skill.slug}`,
        publisherHandle: publisherOf(skill),
        publisherDisplayName: publisherOf(skill),
        publisherProfileUrl: null,
        version,
        resolvedFrom: params.has("version") ? "version" : params.has("tag") ? "tag" : "latest",
        tag: params.get("tag"),
        createdAt: ms(created),
        card: { available: false, path: "skill-card.md", url: null, sha256: null, size: null, contentType: null },
        artifact: { sourceFingerprint: fingerprint(files), bundleFingerprints: [], files: [] },
        provenance: { source: "unavailable", reason: "A local catalog records no provenance." },
        security: { status: verdict.decision === "pass" ? "clean" : "suspicious", passed: verdict.decision === "pass" },
        signature: { status: "unsigned" }
      }
    }

    const verdicts = async (request: IncomingMessage) => {
      let body: unknown
      try {
        body = JSON.parse(await readBody(request, 64 * 1024))
      } catch (error) {
        if (error instanceof HttpError) throw error
        throw new HttpError(400, "Invalid JSON")
      }
      const items = (body as { items?: unknown } | null)?.items
      if (!Array.isArray(items) || items.length < 1 || items.length > 100) throw new HttpError(400, "items must hold 1-100 entries")
      const answers = []
      for (const item of items as ReadonlyArray<{ slug?: unknown; version?: unknown; ownerHandle?: unknown }>) {
        if (typeof item?.slug !== "string" || typeof item.version !== "string") throw new HttpError(400, "Each item needs slug and version")
        const requested = { requestedSlug: item.slug, requestedVersion: item.version }
        const failed = (code: string, message: string, reason: string) => ({
          ok: false, decision: "fail", reasons: [reason], ...requested, slug: item.slug, version: null, security: null,
          error: { code, message }
        })
        const found = await run(hub.get(item.slug))
        if (Result.isFailure(found)) {
          if (found.failure._tag !== "HubSkillNotFound") throw found.failure
          answers.push(failed("skill_not_found", "Skill not found", "skill.not_found"))
          continue
        }
        const skill = found.success
        if (!skill.versions?.some((known) => known.version === item.version)) {
          answers.push(failed("version_not_found", "Version not found", "version.not_found"))
          continue
        }
        const verdict = passing(skill, item.version)
        const passed = verdict.decision === "pass"
        answers.push({
          ok: passed, decision: verdict.decision, reasons: verdict.reasons ?? [], ...requested,
          slug: skill.slug, displayName: skill.name, publisherHandle: publisherOf(skill), publisherDisplayName: publisherOf(skill),
          version: item.version, createdAt: ms(skill.updatedAt), checkedAt: ms(skill.updatedAt),
          // OpenClaw's installer refuses a verdict without an overview to show its user.
          overview: `${skill.name} ${item.version} is served from a local catalog; no scanner has reviewed it.`,
          skillUrl: `${origin}/api/v1/skills/${skill.slug}`, securityAuditUrl: `${origin}/api/v1/skills/${skill.slug}/verify?version=${item.version}`,
          security: { status: passed ? "clean" : "suspicious", passed, signals: { staticScan: null, virusTotal: null, skillSpector: null, dependencyRegistry: null } }
        })
      }
      return { schema: "clawhub.skill.security-verdicts.v1", items: answers }
    }

    const download = async (params: URLSearchParams, response: ServerResponse) => {
      const slug = params.get("slug")?.trim().toLowerCase()
      if (!slug) throw new HttpError(400, "Missing slug")
      const skill = await skillOr404(slug)
      const version = versionOf(skill, params)
      const zip = options.archive?.(slug, version) ?? Archive.writeZip(await filesOf(slug, version))
      send(response, 200, zip, "application/zip", { "content-disposition": `attachment; filename="${slug}-${version}.zip"` })
    }

    const resolve = async (params: URLSearchParams) => {
      const slug = params.get("slug")?.trim().toLowerCase()
      const hash = params.get("hash")?.trim().toLowerCase()
      if (!slug || !hash) throw new HttpError(400, "Missing slug or hash")
      const skill = await skillOr404(slug)
      let match: { version: string } | null = null
      for (const { version } of skill.versions ?? []) {
        if (fingerprint(await filesOf(slug, version)) === hash) {
          match = { version }
          break
        }
      }
      return { slug, match, latestVersion: { version: skill.version } }
    }

    const skillRoute = async (request: IncomingMessage, response: ServerResponse, segments: ReadonlyArray<string>, params: URLSearchParams) => {
      const [slug, action, version] = segments.map(decodeURIComponent)
      if (slug === "-" && action === "security-verdicts" && request.method === "POST") return sendJson(response, await verdicts(request))
      if (request.method !== "GET") throw new HttpError(405, "Method not allowed")
      const skill = await skillOr404(slug!.toLowerCase())
      if (action === undefined) return sendJson(response, detail(skill))
      if (action === "install" && version === undefined) {
        const url = new URL("/api/v1/download", origin)
        url.searchParams.set("slug", skill.slug)
        url.searchParams.set("version", skill.version)
        return sendJson(response, { ok: true, slug: skill.slug, installKind: "archive", archive: { version: skill.version, downloadUrl: url.href } })
      }
      if (action === "versions" && version === undefined) {
        return sendJson(response, {
          items: (skill.versions ?? []).map((known) => ({
            version: known.version, createdAt: ms(known.createdAt), changelog: known.changelog, changelogSource: null
          })),
          nextCursor: null
        })
      }
      if (action === "versions" && version !== undefined) {
        const known = skill.versions?.find((candidate) => candidate.version === version)
        if (known === undefined) throw new HttpError(404, "Version not found")
        const files = await filesOf(skill.slug, version)
        return sendJson(response, {
          skill: { slug: skill.slug, displayName: skill.name },
          version: {
            version, createdAt: ms(known.createdAt), changelog: known.changelog, changelogSource: null, license: null,
            files: files.map((file) => ({ path: file.path, size: file.content.length, sha256: sha256(file.content), contentType: null }))
          }
        })
      }
      if (action === "verify" && version === undefined) return sendJson(response, await verify(skill, params))
      throw new HttpError(404, "Not found")
    }

    const route = async (request: IncomingMessage, response: ServerResponse) => {
      const url = new URL(request.url ?? "/", origin)
      const path = url.pathname.replace(/\/+$/, "")
      const params = url.searchParams
      if (path === "/.well-known/clawhub.json" || path === "/.well-known/clawdhub.json") {
        return sendJson(response, { apiBase: origin, authBase: origin, minCliVersion: "0.0.5" })
      }
      if (path === "/api/cli/telemetry/install" && request.method === "POST") return sendJson(response, { ok: true })
      if (request.method === "GET" && path === "/api/v1/skills") return sendJson(response, await list(params))
      if (request.method === "GET" && path === "/api/v1/search") return sendJson(response, await search(params))
      if (request.method === "GET" && path === "/api/v1/trending") return sendJson(response, await trending(params))
      if (request.method === "GET" && path === "/api/v1/download") return download(params, response)
      if (request.method === "GET" && path === "/api/v1/resolve") return sendJson(response, await resolve(params))
      if (path.startsWith("/api/v1/skills/")) {
        return skillRoute(request, response, path.slice("/api/v1/skills/".length).split("/"), params)
      }
      throw new HttpError(404, "Not found")
    }

    const server = createServer((request, response) => {
      options.onRequest?.(request)
      route(request, response).catch((error: unknown) => {
        if (response.headersSent) return response.destroy()
        return error instanceof HttpError
          ? send(response, error.status, error.message, "text/plain; charset=utf-8")
          : send(response, 500, "Internal error", "text/plain; charset=utf-8")
      })
    })

    const close = Effect.callback<void>((resume) => {
      if (!server.listening) return resume(Effect.void)
      server.close(() => resume(Effect.void))
      server.closeAllConnections()
    })

    yield* Effect.acquireRelease(
      Effect.callback<void>((resume) => {
        server.listen(0, "127.0.0.1", () => resume(Effect.void))
      }),
      () => close
    )
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    return { url: origin, close }
  })
