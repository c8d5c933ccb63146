/**
 * Pin by CID, as the pinata SDK calls it: `POST /v3/files/{network}/pin_by_cid` queues a job (`upload.public.cid`),
 * `GET /v3/files/{network}/pin_by_cid` lists the workspace's jobs with their status (`files.public.queue()`: `cid`,
 * `status`, `sort`, `limit`, `pageToken`), `DELETE /v3/files/{network}/pin_by_cid/{id}` cancels a job still open
 * (`deletePinRequest`). The job's work is PinJobs' (application), its DAG from the configured `PIN_SOURCES`.
 */
import { ApiKeys, PinJobs, type PinJobView } from "@cairn/application"
import { Cid, File, Network, PinJob, ValidationFailed } from "@cairn/domain"
import { Effect, Schema } from "effect"
import { HttpRouter } from "effect/http"
import { requireScope } from "../Authenticate.ts"
import * as Body from "../Body.ts"
import { handled } from "../ErrorResponse.ts"
import { data, json } from "../Respond.ts"
import * as RouteCatalog from "../RouteCatalog.ts"

const PinByCid = Schema.Struct({
  cid: Cid,
  name: Schema.optionalKey(Schema.NullOr(Schema.String)),
  group_id: Schema.optionalKey(Schema.NullOr(Schema.String)),
  keyvalues: Schema.optionalKey(Schema.NullOr(File.KeyValues)),
  host_nodes: Schema.optionalKey(Schema.NullOr(Schema.Array(Schema.String)))
})

export const Job = Schema.Struct({
  id: Schema.String,
  cid: Schema.String,
  ipfs_pin_hash: Schema.String,
  date_queued: Schema.String,
  name: Schema.String,
  status: Schema.String,
  reason: Schema.NullOr(Schema.String),
  keyvalues: Schema.NullOr(File.KeyValues),
  host_nodes: Schema.NullOr(Schema.Array(Schema.String)),
  group_id: Schema.NullOr(Schema.String),
  file_id: Schema.NullOr(Schema.String),
  pin_policy: Schema.Struct({ regions: Schema.Array(Schema.Struct({ id: Schema.String, desiredReplicationCount: Schema.Number })), version: Schema.Number })
})

export const toWire = (job: PinJobView): typeof Job.Type => ({
  id: job.id,
  cid: job.cid,
  ipfs_pin_hash: job.cid,
  date_queued: job.queuedAt,
  name: job.name,
  status: job.status,
  reason: job.reason,
  keyvalues: job.keyvalues,
  host_nodes: job.hostNodes.length === 0 ? null : [...job.hostNodes],
  group_id: job.groupId,
  file_id: job.fileId,
  pin_policy: { regions: [], version: 1 }
})

const JobEnvelope = Schema.Struct({ data: Job })
const JobsEnvelope = Schema.Struct({ data: Schema.Struct({ jobs: Schema.Array(Job), next_page_token: Schema.String }) })

const QueueQuery = Schema.Struct({
  cid: Schema.optionalKey(Schema.String),
  status: Schema.optionalKey(Schema.Literals(["prechecking", "retrieving", "pinned", "failed", "cancelled"])),
  sort: Schema.optionalKey(Schema.Literals(["ASC", "DSC"])),
  limit: Schema.optionalKey(Schema.String),
  pageToken: Schema.optionalKey(Schema.String),
  includesCount: Schema.optionalKey(Schema.String)
})

const statuses = new Set(["prechecking", "retrieving", "pinned", "failed", "cancelled"])

const decodeNetwork = (params: Readonly<Record<string, string | undefined>>) => Schema.decodeUnknownEffect(Network)(params["network"])

const notFound = new PinJob.PinJobNotFound({ jobId: "" })

export const layer = HttpRouter.use((router) =>
  Effect.gen(function*() {
    const keys = yield* ApiKeys
    const jobs = yield* PinJobs

    yield* RouteCatalog.add(router, { method: "POST", path: "/v3/files/:network/pin_by_cid", summary: "Pin a CID: a job that fetches its DAG from the pin sources, checks every block and records the file", auth: "apiKey", scope: "org:files:write", body: { schema: PinByCid }, response: { schema: JobEnvelope } }, (request) =>
      handled(Effect.gen(function*() {
        const principal = yield* requireScope(keys, request, "org:files:write")
        const network = yield* decodeNetwork(yield* HttpRouter.params)
        const body = yield* Body.json(request, PinByCid)
        const job = yield* jobs.submit(principal, network, {
          cid: body.cid,
          name: body.name ?? undefined,
          groupId: body.group_id ?? null,
          keyvalues: body.keyvalues ?? undefined,
          hostNodes: body.host_nodes ?? undefined
        })
        return data(toWire(job))
      })))

    yield* RouteCatalog.add(router, { method: "GET", path: "/v3/files/:network/pin_by_cid", summary: "List pin-by-CID jobs", auth: "apiKey", scope: "org:files:read", query: QueueQuery, response: { schema: JobsEnvelope } }, (request) =>
      handled(Effect.gen(function*() {
        const principal = yield* requireScope(keys, request, "org:files:read")
        const network = yield* decodeNetwork(yield* HttpRouter.params)
        const params = new URL(request.url, "http://cairn").searchParams
        const get = (name: string) => {
          const value = params.get(name)
          return value === null || value === "" ? undefined : value
        }
        const status = get("status")
        if (status !== undefined && !statuses.has(status)) {
          return yield* new ValidationFailed({ detail: `status must be one of ${[...statuses].join(", ")}` })
        }
        const cidText = get("cid")
        const cid = cidText === undefined ? undefined : yield* Schema.decodeUnknownEffect(Cid)(cidText)
        const sort = (get("sort") ?? "DSC").toUpperCase()
        if (sort !== "ASC" && sort !== "DSC" && sort !== "DESC") return yield* new ValidationFailed({ detail: "sort must be ASC or DSC" })
        const limitText = get("limit") ?? "10"
        const limit = Number(limitText)
        if (!/^\d+$/.test(limitText) || limit < 1 || limit > 1000) return yield* new ValidationFailed({ detail: "limit must be a whole number from 1 to 1000" })
        const tokenText = get("pageToken")
        const offset = tokenText === undefined ? 0 : Number.parseInt(atob(tokenText.replace(/-/g, "+").replace(/_/g, "/")).replace(/^o:/, ""), 10)
        if (tokenText !== undefined && (!/^[A-Za-z0-9_-]+$/.test(tokenText) || !Number.isInteger(offset) || offset < 0)) {
          return yield* new ValidationFailed({ detail: "pageToken is not a token this service issued" })
        }
        const all = (yield* jobs.list(principal, { network, psa: false }))
          .filter((job) => (status === undefined || job.status === status) && (cid === undefined || job.cid === cid))
        const ordered = sort === "ASC" ? [...all].reverse() : all
        const page = ordered.slice(offset, offset + limit)
        const next = offset + limit < ordered.length ? btoa(`o:${offset + limit}`).replace(/=+$/, "").replace(/\+/g, "-").replace(/\//g, "_") : ""
        return data({ jobs: page.map(toWire), next_page_token: next })
      })))

    yield* RouteCatalog.add(router, { method: "DELETE", path: "/v3/files/:network/pin_by_cid/:id", summary: "Cancel a pin-by-CID job still queued or retrieving", auth: "apiKey", scope: "org:files:write", response: { schema: Schema.Struct({ data: Schema.String }) }, errors: [notFound, new PinJob.PinJobFinished({ jobId: "", current: "pinned" })] }, (request) =>
      handled(Effect.gen(function*() {
        const principal = yield* requireScope(keys, request, "org:files:write")
        const params = yield* HttpRouter.params
        yield* decodeNetwork(params)
        yield* jobs.cancel(principal, params["id"] ?? "")
        return json({ data: "OK" })
      })))
  })
)
