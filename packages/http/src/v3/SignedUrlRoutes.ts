/**
 * Signed URLs, as the pinata SDK asks for them. `POST /v3/files/private/download_link {url|cid, date, expires,
 * method}` (the SDK's `gateways.private.createAccessLink`, `org:files:read`): a link to one CID the workspace holds
 * privately, on the gateway (`/files/<cid>` or `/ipfs/<cid>`: GatewayRoutes.ts, PrivateAccess.ts), good until `date
 * + expires`. `POST /v3/files/sign` is two things told apart by the body: with `url` (or `method`) it is the SDK's
 * `gateways.private.get`, which asks for the same link there and fetches `data` without looking at the answer's
 * status, so the CID is not checked here (the gateway answers 404 `Content not found` when the link is used); without,
 * it is a presigned upload (`upload.*.createSignedURL`, `org:files:write`): a URL that takes one upload without a key
 * (`POST /v3/files/signed/<id>`, FilesRoutes.ts), within `max_file_size` and `allow_mime_types`, recorded with the
 * signed `filename`, `group_id`, `keyvalues` and `network`. Both answer `{data: "<url>"}`. The URL is on the origin
 * the request came to (the SDK forces `https://` onto its `pinataGateway`, so the scheme and host of `url` are not
 * kept); its path and query are the given URL's.
 */
import { ApiKeys, Files, Forbidden, type Principal, SignedUrls } from "@cairn/application"
import { canonical as canonicalCid, File, Group, Network, SignedUrl, ValidationFailed } from "@cairn/domain"
import { Clock, Effect, Option, Schema } from "effect"
import { HttpRouter, type HttpServerRequest } from "effect/http"
import { authenticate, requireScope } from "../Authenticate.ts"
import * as Body from "../Body.ts"
import { handled } from "../ErrorResponse.ts"
import { origin } from "../Origin.ts"
import { data } from "../Respond.ts"
import * as RouteCatalog from "../RouteCatalog.ts"
import * as SignedUrlQuery from "../SignedUrlQuery.ts"

const LinkBody = Schema.Struct({
  url: Schema.optionalKey(Schema.String),
  cid: Schema.optionalKey(Schema.String),
  /** Unix seconds of signing; now when left out. */
  date: Schema.optionalKey(Schema.Number),
  expires: Schema.Number,
  method: Schema.optionalKey(Schema.String)
})

const MimeType = Schema.String.pipe(Schema.check(Schema.makeFilter((type: string) =>
  type === "directory" || /^(?:\*|[A-Za-z0-9!#$&^_.+-]+)\/(?:\*|[A-Za-z0-9!#$&^_.+-]+)$/.test(type) ||
  `allow_mime_types holds "${type}", which is not a mime type (type/subtype, type/*, */*) nor "directory"`)))

const UploadBody = Schema.Struct({
  date: Schema.optionalKey(Schema.Number),
  expires: Schema.Number,
  max_file_size: Schema.optionalKey(Schema.Number.pipe(Schema.check(Schema.isInt(), Schema.isGreaterThanOrEqualTo(1)))),
  allow_mime_types: Schema.optionalKey(Schema.Array(MimeType)),
  group_id: Schema.optionalKey(Schema.NullOr(Schema.String)),
  filename: Schema.optionalKey(Schema.String.pipe(Schema.check(Schema.isMinLength(1)))),
  keyvalues: Schema.optionalKey(File.KeyValues),
  network: Schema.optionalKey(Network),
  streamable: Schema.optionalKey(Schema.Boolean)
})

const UrlEnvelope = Schema.Struct({ data: Schema.String })

const decodeLink = Schema.decodeUnknownEffect(LinkBody)
const decodeUpload = Schema.decodeUnknownEffect(UploadBody)

/** Whether a `/v3/files/sign` body asks for an access link (the SDK's `gateways.private.get`) rather than an upload. */
const isLinkBody = (body: Readonly<Record<string, unknown>>) => "url" in body || "method" in body

/** The gateway path a link is for (`/files/<cid>` or `/ipfs/<cid>`), its CID, and the query the URL already had. */
const linkTarget = (body: typeof LinkBody.Type) =>
  Effect.gen(function*() {
    const cidOf = (given: string) =>
      Option.match(canonicalCid(given), {
        onNone: () => Effect.fail(new ValidationFailed({ detail: `"${given}" is not a valid CID` })),
        onSome: Effect.succeed
      })
    const given = body.cid === undefined ? undefined : yield* cidOf(body.cid)
    if (body.url === undefined) {
      if (given === undefined) return yield* new ValidationFailed({ detail: "give the url (or the cid) to link to" })
      return { path: `/files/${given}`, cid: given, query: new URLSearchParams() }
    }
    const parsed = URL.parse(body.url, "http://cairn")
    // Matched at the end of the path: the SDK makes `https://http://host/files/<cid>` of a gateway given as `http://…`.
    const match = parsed === null ? null : /\/(files|ipfs)\/([^/]+)\/?$/.exec(parsed.pathname)
    if (parsed === null || match === null) {
      return yield* new ValidationFailed({ detail: "url must be a gateway URL of a CID: <gateway>/files/<cid> or <gateway>/ipfs/<cid>" })
    }
    const cid = yield* cidOf(decodeURIComponent(match[2]!))
    if (given !== undefined && given !== cid) return yield* new ValidationFailed({ detail: "url and cid name different CIDs" })
    return { path: `/${match[1]}/${cid}`, cid, query: parsed.searchParams }
  })

/** Unix seconds now. */
const nowSeconds = Effect.map(Clock.currentTimeMillis, (millis) => Math.floor(millis / 1000))

export const layer = HttpRouter.use((router) =>
  Effect.gen(function*() {
    const keys = yield* ApiKeys
    const signedUrls = yield* SignedUrls
    const files = yield* Files

    const accessLink = (request: HttpServerRequest.HttpServerRequest, principal: Principal, body: typeof LinkBody.Type, requireHeld: boolean) =>
      Effect.gen(function*() {
        // Checked here rather than by `requireScope`: `/v3/files/sign` authenticates before it knows which it is.
        if (!principal.scopes.includes("org:files:read")) return yield* new Forbidden({ scope: "org:files:read" })
        if (body.method !== undefined && body.method.toUpperCase() !== "GET") {
          return yield* new ValidationFailed({ detail: "method must be GET: an access link is for reading" })
        }
        const { path, cid, query } = yield* linkTarget(body)
        const date = body.date ?? (yield* nowSeconds)
        const { grant, token } = yield* signedUrls.signLink(principal, { cid, date, expires: body.expires, requireHeld })
        return data(`${origin(request)}${path}?${SignedUrlQuery.withGrant(query, grant, token, "GET")}`)
      })

    const presignedUpload = (request: HttpServerRequest.HttpServerRequest, principal: Principal, body: typeof UploadBody.Type) =>
      Effect.gen(function*() {
        if (!principal.scopes.includes("org:files:write")) return yield* new Forbidden({ scope: "org:files:write" })
        const terms: SignedUrl.UploadTerms = {
          ...(body.network === undefined ? {} : { network: body.network }),
          ...(body.max_file_size === undefined ? {} : { maxFileSize: body.max_file_size }),
          ...(body.allow_mime_types === undefined ? {} : { allowMimeTypes: body.allow_mime_types }),
          ...(body.group_id === undefined || body.group_id === null || body.group_id === "" ? {} : { groupId: body.group_id }),
          ...(body.filename === undefined ? {} : { filename: body.filename }),
          ...(body.keyvalues === undefined ? {} : { keyvalues: body.keyvalues })
        }
        // A group the URL names must be the workspace's on its network (404 Group not found now, not at the upload);
        // without a network the upload's own is checked when it comes.
        if (terms.network !== undefined && terms.groupId !== undefined) yield* files.requireGroup(principal, terms.network, terms.groupId)
        const date = body.date ?? (yield* nowSeconds)
        const { grant, token } = yield* signedUrls.signUpload(principal, { date, expires: body.expires, terms })
        const query = SignedUrlQuery.withGrant(new URLSearchParams(), grant, token, "POST")
        return data(`${origin(request)}/v3/files/signed/${grant.grantId}?${query}`)
      })

    yield* RouteCatalog.add(router, {
      method: "POST",
      path: "/v3/files/sign",
      summary: "Create a presigned upload URL (one upload without a key), or a private access link (a body with url)",
      auth: "apiKey",
      scope: "org:files:write",
      body: { schema: Schema.Union([UploadBody, LinkBody]), description: "An upload's {date, expires, max_file_size?, allow_mime_types?, group_id?, filename?, keyvalues?, network?}; or a link's {url, date, expires, method} (org:files:read)" },
      response: { schema: UrlEnvelope },
      errors: [new Group.GroupNotFound({ groupId: "" })]
    }, (request) =>
      handled(Effect.gen(function*() {
        // The scope depends on which of the two it is (checked by each), so any valid key gets that far.
        const principal = yield* authenticate(keys, request)
        const body = yield* Body.json(request, Schema.Record(Schema.String, Schema.Unknown))
        return isLinkBody(body)
          ? yield* accessLink(request, principal, yield* decodeLink(body), false)
          : yield* presignedUpload(request, principal, yield* decodeUpload(body))
      })))

    yield* RouteCatalog.add(router, {
      method: "POST",
      path: "/v3/files/private/download_link",
      summary: "Create a signed, expiring link to a CID held on the private network",
      auth: "apiKey",
      scope: "org:files:read",
      body: { schema: LinkBody },
      response: { schema: UrlEnvelope },
      errors: [new File.FileNotFound({ fileId: "" })]
    }, (request) =>
      handled(Effect.gen(function*() {
        const principal = yield* requireScope(keys, request, "org:files:read")
        return yield* accessLink(request, principal, yield* Body.json(request, LinkBody), true)
      })))
  })
)
