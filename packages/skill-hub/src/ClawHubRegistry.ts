/**
 * The SkillHub port on a ClawHub-compatible registry (`CLAWHUB_URL`, optionally `CLAWHUB_TOKEN` as a bearer token),
 * speaking the protocol OpenClaw's installer speaks (ClawHubProtocol.ts has the bodies):
 *
 *   search with q      GET  /api/v1/search?q=&limit=          relevance order, one page (nextCursor is null)
 *   search without q   GET  /api/v1/skills?sort=&cursor=&limit=&category=
 *   get                GET  /api/v1/skills/<slug>  (404: HubSkillNotFound), and /versions for the history
 *   download           POST /api/v1/skills/-/security-verdicts, then GET /api/v1/download?slug=&version= (a zip)
 *
 * Sorts map to ClawHub's: popular (the default, as in LocalCatalog) → `downloads`, newest → `newest` (by creation),
 * name → `name`. ClawHub filters skills by no category, so `category` is sent (a registry that knows it filters
 * exactly; ClawHub ignores it) and the page is filtered here too, on the skill's category or any of its topics: such
 * a page may come back short, and only a null nextCursor ends the listing. Search has no category, sort or cursor
 * in the protocol: a sort is applied to the one page it returns, a category is not applied. A skill with no hosted
 * version (a GitHub-backed one) is left out of listings and is HubSkillNotFound, since only a hosted zip downloads.
 *
 * Before a download, the registry's security verdict on the exact version is asked for: anything but "pass" is
 * ValidationFailed (a version whose scan is still pending too; trying later may pass). A registry without that
 * endpoint (404) gives no verdict and the download goes ahead. Unreachable, timed out (10 s per request), 5xx or
 * anything that is not the protocol is SkillHubUnavailable; JSON bodies are read up to 2 MiB and the zip up to the
 * archive limit, counted as they arrive.
 */
import { Bytes, ValidationFailed } from "@cairn/domain"
import { Data, Duration, Effect, Layer, Option, type Redacted, Schema } from "effect"
import {
  FetchHttpClient,
  HttpClient,
  HttpClientRequest,
  type HttpClientResponse
} from "effect/http"
import * as Archive from "./Archive.ts"
import * as BundleRules from "./BundleRules.ts"
import * as Protocol from "./ClawHubProtocol.ts"
import {
  type HubPage,
  type HubQuery,
  type HubSkill,
  HubSkillNotFound,
  pageSize,
  SkillHub,
  SkillHubUnavailable
} from "./SkillHub.ts"

export interface Options {
  /** The registry's base URL, such as `https://clawhub.ai`. */
  readonly url: string
  readonly token?: Redacted.Redacted<string> | undefined
  /** Each request's time limit, reading its body included: 10 seconds unless given. */
  readonly timeout?: Duration.Input | undefined
  readonly limits?: Partial<BundleRules.Limits> | undefined
}

const MAX_JSON_BYTES = 2 * 1024 * 1024

const sorts: Record<NonNullable<HubQuery["sort"]>, string> = { popular: "downloads", newest: "newest", name: "name" }

const localSorts: Record<NonNullable<HubQuery["sort"]>, (a: HubSkill, b: HubSkill) => number> = {
  popular: (a, b) => b.installs - a.installs,
  newest: (a, b) => b.updatedAt.localeCompare(a.updatedAt),
  name: (a, b) => a.name.localeCompare(b.name)
}

/** The registry answered, but not with what the protocol says. */
class NotProtocol extends Data.TaggedError("NotProtocol")<{ readonly message: string }> {}

/** The registry has no security-verdicts endpoint (an older or simpler registry). */
class NoVerdicts extends Data.TaggedError("NoVerdicts") {}

const isNotFound = (error: unknown): error is HubSkillNotFound => error instanceof HubSkillNotFound
const isRefusal = (error: unknown): error is HubSkillNotFound | ValidationFailed =>
  error instanceof HubSkillNotFound || error instanceof ValidationFailed

/** A response body, failing as soon as it passes `max` bytes (a declared Content-Length over it fails at once). */
const bodyWithin = <E>(response: HttpClientResponse.HttpClientResponse, max: number, tooLarge: () => E) => {
  const declared = Number(response.headers["content-length"])
  if (Number.isFinite(declared) && declared > max) return Effect.fail(tooLarge())
  return Bytes.collectWithin(response.stream, max, tooLarge)
}

export const make = (options: Options) =>
  Effect.gen(function*() {
    const registry = options.url.replace(/\/+$/, "")
    const limits = BundleRules.limitsWith(options.limits)
    const timeout = options.timeout ?? Duration.seconds(10)
    const token = options.token
    const client = (yield* HttpClient.HttpClient).pipe(
      HttpClient.mapRequest((request) => {
        const based = HttpClientRequest.prependUrl(request, registry)
        return token === undefined ? based : HttpClientRequest.bearerToken(based, token)
      })
    )
    const unavailable = (cause: unknown) =>
      cause instanceof SkillHubUnavailable ? cause : new SkillHubUnavailable({ registry, cause })
    /** Keeps the errors a caller may handle, and turns everything else (transport, timeout, protocol) into 503. */
    const settle = <T>(keep: (error: unknown) => error is T) => (error: unknown): T | SkillHubUnavailable =>
      keep(error) ? error : unavailable(error)

    /** Sends a request and handles its response, the whole exchange within the time limit. */
    const exchange = <A, E>(
      request: HttpClientRequest.HttpClientRequest,
      handle: (response: HttpClientResponse.HttpClientResponse) => Effect.Effect<A, E>
    ) => client.execute(request).pipe(Effect.flatMap(handle), Effect.timeout(timeout))

    const answered = (request: HttpClientRequest.HttpClientRequest, status: number) =>
      new NotProtocol({ message: `${request.method} ${request.url} answered ${status}` })

    /** A 200's JSON body decoded with `schema`; another status is `onStatus`'s to name, or not the protocol. */
    const json = <A, E = never>(
      request: HttpClientRequest.HttpClientRequest,
      schema: Schema.Decoder<A>,
      onStatus: (status: number) => E | undefined = () => undefined
    ) =>
      exchange(HttpClientRequest.acceptJson(request), (response) =>
        Effect.gen(function*() {
          if (response.status !== 200) return yield* Effect.fail(onStatus(response.status) ?? answered(request, response.status))
          const bytes = yield* bodyWithin(response, MAX_JSON_BYTES, () => new NotProtocol({ message: `${request.url} answered more than 2 MiB` }))
          const value = yield* Effect.try({
            try: (): unknown => JSON.parse(new TextDecoder().decode(bytes)),
            catch: () => new NotProtocol({ message: `${request.url} did not answer JSON` })
          })
          return yield* Schema.decodeUnknownEffect(schema)(value)
        }))

    const notFound = (slug: string, version?: string) => (status: number) =>
      status === 404 || (version !== undefined && status === 410)
        ? new HubSkillNotFound(version === undefined ? { slug } : { slug, version })
        : undefined

    const skillPath = (slug: string) => `/api/v1/skills/${encodeURIComponent(slug)}`

    const detail = (slug: string) =>
      Effect.flatMap(json(HttpClientRequest.get(skillPath(slug)), Protocol.Detail, notFound(slug)), (body) => {
        const skill = body.skill === null ? undefined : Protocol.toSkill(body.skill, body.latestVersion, body.owner?.handle)
        return skill === undefined ? Effect.fail(new HubSkillNotFound({ slug })) : Effect.succeed(skill)
      })

    // The history is a courtesy of `get`: a registry without it still answers the detail.
    const versions = (slug: string) =>
      json(
        HttpClientRequest.get(`${skillPath(slug)}/versions`).pipe(HttpClientRequest.setUrlParams({ limit: "100" })),
        Protocol.Versions
      ).pipe(Effect.map((body) => Protocol.toVersions(body.items)), Effect.option)

    const get = (slug: string): Effect.Effect<HubSkill, HubSkillNotFound | SkillHubUnavailable> =>
      Effect.all([detail(slug), versions(slug)], { concurrency: 2 }).pipe(
        Effect.map(([skill, history]): HubSkill => Option.match(history, { onNone: () => skill, onSome: (versions) => ({ ...skill, versions }) })),
        Effect.mapError(settle(isNotFound))
      )

    const matchesCategory = (wanted: string) => (skill: HubSkill) =>
      wanted === "" || skill.category?.toLowerCase() === wanted || skill.tags.some((tag) => tag.toLowerCase() === wanted)

    const search = (query: HubQuery): Effect.Effect<HubPage, SkillHubUnavailable> => {
      const limit = String(pageSize(query.limit))
      const q = query.q?.trim() ?? ""
      if (q !== "") {
        const request = HttpClientRequest.get("/api/v1/search").pipe(HttpClientRequest.setUrlParams({ q, limit }))
        return json(request, Protocol.Search).pipe(
          Effect.map((body) => {
            const skills = body.results.flatMap((result) => Protocol.searchResultToSkill(result) ?? [])
            return { skills: query.sort === undefined ? skills : skills.sort(localSorts[query.sort]), nextCursor: null }
          }),
          Effect.mapError(unavailable)
        )
      }
      const category = query.category?.trim() ?? ""
      const request = HttpClientRequest.get("/api/v1/skills").pipe(HttpClientRequest.setUrlParams({
        limit,
        sort: sorts[query.sort ?? "popular"],
        ...(query.cursor === undefined || query.cursor === "" ? {} : { cursor: query.cursor }),
        ...(category === "" ? {} : { category })
      }))
      return json(request, Protocol.List).pipe(
        Effect.map((body) => ({
          skills: body.items
            .flatMap((item) => Protocol.toSkill(item, item.latestVersion, item.owner?.handle ?? item.ownerHandle) ?? [])
            .filter(matchesCategory(category.toLowerCase())),
          nextCursor: body.nextCursor ?? null
        })),
        Effect.mapError(unavailable)
      )
    }

    /** Refuses a version the registry's security verdict does not pass. */
    const checkVerdict = (slug: string, version: string) =>
      Effect.gen(function*() {
        const request = yield* HttpClientRequest.bodyJson(
          HttpClientRequest.post("/api/v1/skills/-/security-verdicts"),
          { items: [{ slug, version }] }
        )
        const body = yield* json(request, Protocol.Verdicts, (status) => (status === 404 ? new NoVerdicts() : undefined)).pipe(
          Effect.catchTag("NoVerdicts", () => Effect.succeed(undefined))
        )
        if (body === undefined) return
        const verdict = body.items[0]
        if (verdict === undefined) return yield* new NotProtocol({ message: "the security verdicts came back empty" })
        if (verdict.decision === "pass") return
        const reasons = verdict.reasons ?? []
        if (reasons.includes("skill.not_found") || reasons.includes("version.not_found")) {
          return yield* new HubSkillNotFound({ slug, version })
        }
        return yield* new ValidationFailed({
          detail: `the hub's security verdict for ${slug}@${version} is ${verdict.decision}` +
            (reasons.length > 0 ? ` (${reasons.join(", ")})` : "")
        })
      })

    const download = (slug: string, version?: string) =>
      Effect.gen(function*() {
        const wanted = version ?? (yield* detail(slug)).version
        yield* checkVerdict(slug, wanted)
        const request = HttpClientRequest.get("/api/v1/download").pipe(HttpClientRequest.setUrlParams({ slug, version: wanted }))
        const zip = yield* exchange(request, (response) =>
          Effect.gen(function*() {
            if (response.status !== 200) {
              return yield* Effect.fail(notFound(slug, wanted)(response.status) ?? answered(request, response.status))
            }
            return yield* bodyWithin(response, limits.maxArchiveBytes, () => BundleRules.archiveTooLarge(limits))
          }))
        const files = yield* Archive.read(zip, limits)
        return { slug, version: wanted, files }
      }).pipe(Effect.mapError(settle(isRefusal)))

    return SkillHub.of({ registry, search, get, download })
  })

export const layer = (options: Options) => Layer.effect(SkillHub, make(options)).pipe(Layer.provide(FetchHttpClient.layer))
