/**
 * The IPFS Pinning Service API (`ipfs/pinning-services-api-spec`, a copy in docs/reference/ipfs-pinning-service.yaml)
 * on `/pins` (and `/psa/pins`, where Pinata serves it), as Kubo's `ipfs pin remote` calls it: list with the spec's filters (`cid`, `name` with `match`,
 * `status`, `before`, `after`, `limit`, `meta`), add (202), get, replace (202: a new pin, the old one removed) and
 * remove (202). Bearer tokens are Cairn's API keys. A pin is a pin-by-CID job on the public network (PinJobs), its
 * statuses mapped: `prechecking` → `queued`, `retrieving` → `pinning`, then `pinned` or `failed` (the reason in
 * `info.status_details`); a removed pin is gone. Failures have the spec's shape, `{error: {reason, details}}`.
 */
import { ApiKeys, PinJobs, type PinJobView } from "@cairn/application"
import { Cid, PinJob, ValidationFailed } from "@cairn/domain"
import { Effect, Schema } from "effect"
import { HttpRouter, type HttpServerRequest, HttpServerResponse } from "effect/http"
import { requireScope } from "./Authenticate.ts"
import * as Body from "./Body.ts"
import { handled } from "./ErrorResponse.ts"
import { json, standardHeaders } from "./Respond.ts"
import * as RouteCatalog from "./RouteCatalog.ts"

const PsaStatus = Schema.Literals(["queued", "pinning", "pinned", "failed"])
type PsaStatus = typeof PsaStatus.Type

const Meta = Schema.Record(Schema.String, Schema.String)

const PinBody = Schema.Struct({
  cid: Cid,
  name: Schema.optionalKey(Schema.String.pipe(Schema.check(Schema.isMaxLength(255)))),
  origins: Schema.optionalKey(Schema.Array(Schema.String).pipe(Schema.check(Schema.isMaxLength(20)))),
  meta: Schema.optionalKey(Meta)
})

const PinStatus = Schema.Struct({
  requestid: Schema.String,
  status: PsaStatus,
  created: Schema.String,
  pin: Schema.Struct({
    cid: Schema.String,
    name: Schema.optionalKey(Schema.String),
    origins: Schema.optionalKey(Schema.Array(Schema.String)),
    meta: Schema.optionalKey(Meta)
  }),
  delegates: Schema.Array(Schema.String),
  info: Schema.optionalKey(Meta)
})

const PinResults = Schema.Struct({ count: Schema.Number, results: Schema.Array(PinStatus) })

const psaStatus = (job: PinJobView): PsaStatus | undefined =>
  job.status === "prechecking" ? "queued" : job.status === "retrieving" ? "pinning" : job.status === "cancelled" ? undefined : job.status

/**
 * Where the pinned data is received: this node's gateway, as an `/http` multiaddr (the spec asks for at least one
 * delegate; Cairn does not speak bitswap, so a client's dial to it fails harmlessly, as the spec allows).
 */
const delegatesOf = (request: HttpServerRequest.HttpServerRequest): ReadonlyArray<string> => {
  const host = request.headers["host"] ?? "127.0.0.1"
  const url = new URL(`http://${host}`)
  const port = url.port === "" ? "80" : url.port
  const ip4 = /^\d+\.\d+\.\d+\.\d+$/.test(url.hostname)
  return [`/${ip4 ? "ip4" : "dns"}/${url.hostname}/tcp/${port}/http`]
}

const toWire = (job: PinJobView, delegates: ReadonlyArray<string>): typeof PinStatus.Type => ({
  requestid: job.id,
  status: psaStatus(job) ?? "failed",
  created: job.queuedAt,
  pin: {
    cid: job.cid,
    ...(job.name === job.cid ? {} : { name: job.name }),
    ...(job.meta === null ? {} : { meta: job.meta })
  },
  delegates: [...delegates],
  ...(job.status === "failed" && job.reason !== null ? { info: { status_details: job.reason } } : {})
})

const reasons: Record<number, string> = { 400: "BAD_REQUEST", 401: "UNAUTHORIZED", 403: "FORBIDDEN", 404: "NOT_FOUND", 409: "CONFLICT", 413: "PAYLOAD_TOO_LARGE", 503: "SERVICE_UNAVAILABLE", 507: "INSUFFICIENT_STORAGE" }
const reasonOf = (status: number) => reasons[status] ?? (status >= 500 ? "INTERNAL_SERVER_ERROR" : "BAD_REQUEST")

/** Cairn's `{error}` answers in the spec's Failure shape: `{error: {reason, details}}`, same status. */
const psaHandled = <E, R>(handler: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
  Effect.map(handled(handler), (response) => {
    if (response.status < 400 || response.body._tag !== "Uint8Array") return response
    let details = "request failed"
    try {
      const parsed = JSON.parse(new TextDecoder().decode(response.body.body)) as { error?: unknown; reason?: unknown }
      details = [parsed.error, parsed.reason].filter((part) => typeof part === "string").join(": ")
    } catch {
      // keep the generic details
    }
    const headers: Record<string, string> = {}
    const challenge = response.headers["www-authenticate"]
    if (challenge !== undefined) headers["www-authenticate"] = challenge
    return json({ error: { reason: reasonOf(response.status), details } }, response.status, headers)
  })

const accepted = (body: unknown) => json(body, 202)

const isoDate = (name: string, value: string) =>
  Number.isNaN(Date.parse(value)) ? Effect.fail(new ValidationFailed({ detail: `${name} must be an RFC 3339 date-time` })) : Effect.succeed(Date.parse(value))

/**
 * The list's filters, as the spec defines them (`cid` and `status` comma-separated, `meta` a JSON object, or
 * `meta[key]=value` as the spec's generated client writes it).
 */
const listFilter = (request: HttpServerRequest.HttpServerRequest) =>
  Effect.gen(function*() {
    const params = new URL(request.url, "http://cairn").searchParams
    const get = (name: string) => params.get(name) ?? undefined
    const cidText = get("cid")
    const cids = cidText === undefined ? undefined : cidText.split(",").filter((part) => part !== "")
    if (cids !== undefined && (cids.length === 0 || cids.length > 10)) return yield* new ValidationFailed({ detail: "cid takes 1 to 10 CIDs, comma-separated" })
    const canonicalCids = cids === undefined ? undefined : yield* Effect.forEach(cids, (cid) => Schema.decodeUnknownEffect(Cid)(cid))
    const statusText = get("status")
    const statuses = statusText === undefined ? ["pinned"] : statusText.split(",")
    for (const status of statuses) {
      if (!["queued", "pinning", "pinned", "failed"].includes(status)) {
        return yield* new ValidationFailed({ detail: `status must be queued, pinning, pinned or failed (comma-separated), not ${JSON.stringify(status)}` })
      }
    }
    const match = get("match") ?? "exact"
    if (!["exact", "iexact", "partial", "ipartial"].includes(match)) return yield* new ValidationFailed({ detail: "match must be exact, iexact, partial or ipartial" })
    const name = get("name")
    if (name !== undefined && name.length > 255) return yield* new ValidationFailed({ detail: "name must be at most 255 characters" })
    const limitText = get("limit") ?? "10"
    const limit = Number(limitText)
    if (!/^\d+$/.test(limitText) || limit < 1 || limit > 1000) return yield* new ValidationFailed({ detail: "limit must be a whole number from 1 to 1000" })
    const before = get("before") === undefined ? undefined : yield* isoDate("before", get("before")!)
    const after = get("after") === undefined ? undefined : yield* isoDate("after", get("after")!)
    const metaText = get("meta")
    let meta: Record<string, string> | undefined
    if (metaText !== undefined) {
      meta = yield* Schema.decodeUnknownEffect(Schema.fromJsonString(Meta))(metaText).pipe(
        Effect.mapError(() => new ValidationFailed({ detail: "meta must be a JSON object of strings" }))
      )
    }
    // The client generated from the spec (`@ipfs-shipyard/pinning-service-client`) writes meta as `meta[key]=value`.
    for (const [param, value] of params) {
      const key = /^meta\[(.+)\]$/.exec(param)?.[1]
      if (key !== undefined) meta = { ...meta, [key]: value }
    }
    const nameMatches = (candidate: string) => {
      if (name === undefined) return true
      switch (match) {
        case "iexact":
          return candidate.toLowerCase() === name.toLowerCase()
        case "partial":
          return candidate.includes(name)
        case "ipartial":
          return candidate.toLowerCase().includes(name.toLowerCase())
        default:
          return candidate === name
      }
    }
    return (jobs: ReadonlyArray<PinJobView>) => {
      const matching = jobs.filter((job) => {
        const status = psaStatus(job)
        if (status === undefined || !statuses.includes(status)) return false
        if (canonicalCids !== undefined && !canonicalCids.includes(job.cid)) return false
        if (!nameMatches(job.name)) return false
        const created = Date.parse(job.queuedAt)
        if (before !== undefined && !(created < before)) return false
        if (after !== undefined && !(created > after)) return false
        if (meta !== undefined && !Object.entries(meta).every(([key, value]) => job.meta?.[key] === value)) return false
        return true
      })
      return { count: matching.length, results: matching.slice(0, limit) }
    }
  })

const ListQuery = Schema.Struct({
  cid: Schema.optionalKey(Schema.String),
  name: Schema.optionalKey(Schema.String),
  match: Schema.optionalKey(Schema.Literals(["exact", "iexact", "partial", "ipartial"])),
  status: Schema.optionalKey(Schema.String),
  before: Schema.optionalKey(Schema.String),
  after: Schema.optionalKey(Schema.String),
  limit: Schema.optionalKey(Schema.String),
  meta: Schema.optionalKey(Schema.String)
})

const notFound = new PinJob.PinJobNotFound({ jobId: "" })

/** The spec's Failure, as the OpenAPI document describes these routes' failures. */
const failure: RouteCatalog.FailureBody = {
  name: "PinningServiceFailure",
  jsonSchema: {
    type: "object",
    description: "The Pinning Service API's Failure: `reason` from the status, `details` Cairn's documented string.",
    properties: {
      error: {
        type: "object",
        properties: { reason: { type: "string" }, details: { type: "string" } },
        required: ["reason"]
      }
    },
    required: ["error"]
  },
  example: (error) => ({ error: { reason: reasonOf(error.status), details: error.message } })
}

export const layer = HttpRouter.use((router) =>
  Effect.gen(function*() {
    const keys = yield* ApiKeys
    const jobs = yield* PinJobs

    const add = (request: HttpServerRequest.HttpServerRequest, principal: Parameters<typeof jobs.submit>[0], body: typeof PinBody.Type) =>
      Effect.map(
        jobs.submit(principal, "public", {
          cid: body.cid,
          name: body.name,
          ...(body.meta === undefined ? {} : { meta: body.meta }),
          psa: true
        }),
        (job) => toWire(job, delegatesOf(request))
      )

    /** A pin of the caller's made through this API, not removed. */
    const pinOf = (principal: Parameters<typeof jobs.get>[0], requestid: string) =>
      Effect.flatMap(jobs.get(principal, requestid), (job) =>
        job.psa && job.status !== "cancelled" ? Effect.succeed(job) : Effect.fail(new PinJob.PinJobNotFound({ jobId: requestid })))

    // At `/pins`, and at `/psa/pins` as Pinata serves it (a Kubo configured with Pinata's `/psa` endpoint works as is).
    for (const prefix of ["", "/psa"] as const) {
      yield* RouteCatalog.add(router, { method: "GET", path: `${prefix}/pins`, summary: "Pinning Service API: list pin objects", auth: "apiKey", scope: "org:files:read", query: ListQuery, response: { schema: PinResults }, failure }, (request) =>
        psaHandled(Effect.gen(function*() {
          const principal = yield* requireScope(keys, request, "org:files:read")
          const filter = yield* listFilter(request)
          const { count, results } = filter(yield* jobs.list(principal, { psa: true }))
          const delegates = delegatesOf(request)
          return json({ count, results: results.map((job) => toWire(job, delegates)) })
        })))

      yield* RouteCatalog.add(router, { method: "POST", path: `${prefix}/pins`, summary: "Pinning Service API: add a pin object", auth: "apiKey", scope: "org:files:write", body: { schema: PinBody }, response: { schema: PinStatus, status: 202 }, failure }, (request) =>
        psaHandled(Effect.gen(function*() {
          const principal = yield* requireScope(keys, request, "org:files:write")
          const body = yield* Body.json(request, PinBody)
          return accepted(yield* add(request, principal, body))
        })))

      yield* RouteCatalog.add(router, { method: "GET", path: `${prefix}/pins/:requestid`, summary: "Pinning Service API: get a pin object", auth: "apiKey", scope: "org:files:read", response: { schema: PinStatus }, errors: [notFound], failure }, (request) =>
        psaHandled(Effect.gen(function*() {
          const principal = yield* requireScope(keys, request, "org:files:read")
          const { requestid } = yield* HttpRouter.params
          return json(toWire(yield* pinOf(principal, requestid ?? ""), delegatesOf(request)))
        })))

      yield* RouteCatalog.add(router, { method: "POST", path: `${prefix}/pins/:requestid`, summary: "Pinning Service API: replace a pin object (a new one; the old one removed)", auth: "apiKey", scope: "org:files:write", body: { schema: PinBody }, response: { schema: PinStatus, status: 202 }, errors: [notFound], failure }, (request) =>
        psaHandled(Effect.gen(function*() {
          const principal = yield* requireScope(keys, request, "org:files:write")
          const { requestid } = yield* HttpRouter.params
          const old = yield* pinOf(principal, requestid ?? "")
          const body = yield* Body.json(request, PinBody)
          // The new pin first, so blocks both share are never without a pin between the two.
          const made = yield* add(request, principal, body)
          yield* jobs.cancel(principal, old.id, { evenIfFinished: true })
          return accepted(made)
        })))

      yield* RouteCatalog.add(router, { method: "DELETE", path: `${prefix}/pins/:requestid`, summary: "Pinning Service API: remove a pin object", auth: "apiKey", scope: "org:files:write", response: { status: 202, empty: true, description: "Removed" }, errors: [notFound], failure }, (request) =>
        psaHandled(Effect.gen(function*() {
          const principal = yield* requireScope(keys, request, "org:files:write")
          const { requestid } = yield* HttpRouter.params
          const pin = yield* pinOf(principal, requestid ?? "")
          yield* jobs.cancel(principal, pin.id, { evenIfFinished: true })
          return HttpServerResponse.empty({ status: 202, headers: standardHeaders() })
        })))
    }
  })
)
