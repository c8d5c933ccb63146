/**
 * `GET /ipfs/{cid}/{path…}` (and `GET /files/{cid}/{path…}`, the path of the pinata SDK's private gateway URLs): the
 * path gateway (decision 0045). It serves CIDs that some workspace holds on the public network, and private content
 * through a private access link or with an API key of a workspace that holds it (PrivateAccess.ts says which network
 * a request reaches), and what lies under them:
 * - a file: its bytes, typed from its name's extension (the path's last name, or `?filename=`) and else sniffed
 *   safely from its first bytes (never as HTML); `Range` (one range: 206, or 416 past the end), `If-None-Match`
 *   (304), `?filename=` and `?download=true` (`Content-Disposition`);
 * - a folder (HAMT shards too): its `index.html` when it has one, else an HTML listing; a folder's URL without
 *   its trailing slash is redirected (301) to the form with it, as IPFS gateways do, so relative links resolve;
 * - the trustless formats, chosen by `Accept` or `?format=raw|car`: the block (`application/vnd.ipld.raw`) or the
 *   DAG as a CAR (`application/vnd.ipld.car`) of the CID the path ends at.
 * A CID and what is under it never change, so every answer is `Cache-Control: immutable` with the CID the path ends
 * at as its ETag. Every answer from a CID carries `X-Content-Type-Options: nosniff` and a sandboxing
 * Content-Security-Policy without `allow-same-origin`: a page from a CID runs in an opaque origin, so it can reach
 * neither Cairn's origin nor another user's session. A signed public CID carries its signature in `pinata-signature`.
 * Private content is `Cache-Control: private` and `Referrer-Policy: no-referrer` instead (PrivateAccess.ts).
 *
 * A CID no workspace holds publicly (and the request may not reach privately), one the content store does not hold (its blocks gone, a store switched), a
 * path with nothing at it and a symlink (never followed) are the same 404 `Content not found`: the gateway says
 * nothing about what else exists. A path that could climb out of its CID (`..`, `%2e%2e`) or hides a slash in a
 * name (`%2F`) is 400 `Validation failed: …`. A remote store (Kubo) that does not answer in time is 504 `Content
 * store timed out`, logged.
 */
import { Signatures } from "@cairn/application"
import { ContentStore, ContentTimeout, type Network, type PathTarget } from "@cairn/content-store"
import { Cid, CidRecord } from "@cairn/domain"
import { Effect, Option, Schema } from "effect"
import { HttpRouter, type HttpServerRequest, HttpServerResponse, Mime } from "effect/http"
import * as ContentType from "./ContentType.ts"
import * as DirectoryListing from "./DirectoryListing.ts"
import { handled } from "./ErrorResponse.ts"
import * as GatewayRequest from "./GatewayRequest.ts"
import * as PrivateAccess from "./PrivateAccess.ts"
import { json, standardHeaders } from "./Respond.ts"
import * as RouteCatalog from "./RouteCatalog.ts"

/** The gateway's query parameters, as the document describes them. */
const GatewayQuery = Schema.Struct({
  filename: Schema.optional(Schema.String).annotate({ description: "The name to type the file by and to download it as" }),
  download: Schema.optional(Schema.Literals(["true", "false"])).annotate({ description: "`true`: Content-Disposition attachment" }),
  format: Schema.optional(Schema.Literals(["raw", "car"])).annotate({ description: "The block, or the DAG as a CAR" })
})

const formatOf = (accept: string | undefined, format: string | null) => {
  if (format === "raw" || accept?.includes("application/vnd.ipld.raw")) return "raw"
  if (format === "car" || accept?.includes("application/vnd.ipld.car")) return "car"
  return "file"
}

const immutable = "public, max-age=29030400, immutable"

/**
 * What a page from a CID may do: run its scripts, submit its forms and open popups, in a sandbox without
 * `allow-same-origin`, so its origin is opaque: no cookies, storage or credentials of Cairn's origin, and Cairn's
 * API answers it as it would any other site.
 */
export const contentSecurityPolicy = "sandbox allow-scripts allow-forms allow-popups allow-modals allow-downloads"

/** How many CIDs' sniffed content types are kept (a CID's bytes never change, so neither does its type). */
const sniffedTypesKept = 1024

/** The type a name's extension gives, with UTF-8 for text; none for a name without a known extension. */
const typeOfName = (name: string | undefined) =>
  name === undefined ? Option.none<string>() : Mime.getType(name).pipe(
    Option.map((type) => type.startsWith("text/") ? `${type}; charset=utf-8` : type)
  )

export const layer = HttpRouter.use((router) =>
  Effect.gen(function*() {
    const signatures = yield* Signatures
    const content = yield* ContentStore
    const access = yield* PrivateAccess.make
    const sniffedTypes = new Map<string, string>()

    /** A file's type: from its name, else sniffed from its first bytes (once per CID). */
    const typeOf = (file: PathTarget, name: string | undefined, network: Network) =>
      Option.match(typeOfName(name), {
        onSome: Effect.succeed,
        onNone: () => {
          const known = sniffedTypes.get(file.cid)
          if (known !== undefined) return Effect.succeed(known)
          return ContentType.sniffStream(content.cat(file.cid, network, { offset: 0, length: 4100 })).pipe(
            Effect.tap((type) =>
              Effect.sync(() => {
                if (sniffedTypes.size >= sniffedTypesKept) sniffedTypes.delete(sniffedTypes.keys().next().value!)
                sniffedTypes.set(file.cid, type)
              })
            )
          )
        }
      })

    const serve = (request: HttpServerRequest.HttpServerRequest) =>
      Effect.gen(function*() {
        const path = yield* Effect.fromResult(GatewayRequest.parsePath(request.url))
        const cid = yield* Schema.decodeUnknownEffect(Cid)(path.cid)
        const query = new URL(request.url, "http://cairn").searchParams
        const network = yield* access.networkFor(request, cid, query)
        // Checked before any status goes out, so a missing root is a 404 whatever the format (a stream's failure
        // after its first byte could only break the response).
        if (!(yield* content.has(cid, network))) return yield* new CidRecord.ContentNotPublic({ cid })
        const target = yield* content.resolve(cid, path.segments, network)
        if (target.kind === "symlink") return yield* new CidRecord.ContentNotPublic({ cid })
        const signature = network === "public" && path.segments.length === 0 ? yield* signatures.publicSignature(cid) : Option.none()
        const common = {
          "cache-control": immutable,
          "x-ipfs-path": `/ipfs/${[cid, ...path.segments].map(encodeURIComponent).join("/")}`,
          "x-content-type-options": "nosniff",
          vary: "Accept",
          ...Option.match(signature, { onNone: () => ({}), onSome: (s) => ({ "pinata-signature": s.signature }) }),
          ...(network === "private" ? PrivateAccess.privateHeaders : {})
        }
        /** 304 when the client's copy is this one, else the answer. */
        const unlessCurrent = <E>(etag: string, headers: Record<string, string>, answer: Effect.Effect<HttpServerResponse.HttpServerResponse, E>) =>
          GatewayRequest.notModified(request.headers["if-none-match"], etag)
            ? Effect.succeed(HttpServerResponse.empty({ status: 304, headers: standardHeaders({ ...headers, etag }) }))
            : answer

        const format = formatOf(request.headers["accept"], query.get("format"))
        if (format === "raw") {
          const etag = `"${target.cid}.raw"`
          const headers = { ...common, "content-security-policy": contentSecurityPolicy }
          return yield* unlessCurrent(etag, headers, Effect.map(content.block(target.cid, network), (block) =>
            HttpServerResponse.uint8Array(block, { contentType: "application/vnd.ipld.raw", headers: standardHeaders({ ...headers, etag }) })))
        }
        if (format === "car") {
          const etag = `"${target.cid}.car"`
          const headers = { ...common, "content-security-policy": contentSecurityPolicy }
          return yield* unlessCurrent(etag, headers, Effect.succeed(
            HttpServerResponse.stream(content.car(target.cid, network), {
              contentType: "application/vnd.ipld.car; version=1",
              headers: standardHeaders({ ...headers, etag })
            })
          ))
        }

        const serveFile = (file: PathTarget, name: string | undefined) =>
          Effect.gen(function*() {
            const etag = `"${file.cid}"`
            const disposition = GatewayRequest.contentDisposition(query.get("filename"), query.get("download"), name ?? file.cid)
            const headers = {
              ...common,
              "accept-ranges": "bytes",
              "content-security-policy": contentSecurityPolicy,
              ...(disposition === undefined ? {} : { "content-disposition": disposition })
            }
            if (GatewayRequest.notModified(request.headers["if-none-match"], etag)) {
              return HttpServerResponse.empty({ status: 304, headers: standardHeaders({ ...headers, etag }) })
            }
            const range = GatewayRequest.parseRange(request.headers["range"], request.headers["if-range"], etag, file.size)
            if (range._tag === "Unsatisfiable") {
              return json({ error: "Range not satisfiable" }, 416, { ...headers, etag, "content-range": `bytes */${file.size}` })
            }
            const filename = query.get("filename")
            const contentType = yield* typeOf(file, filename !== null && filename !== "" ? filename : name, network)
            if (range._tag === "Part") {
              const length = range.end - range.start + 1
              return HttpServerResponse.stream(content.cat(file.cid, network, { offset: range.start, length }), {
                status: 206,
                contentType,
                contentLength: length,
                headers: standardHeaders({ ...headers, etag, "content-range": `bytes ${range.start}-${range.end}/${file.size}` })
              })
            }
            return HttpServerResponse.stream(content.cat(file.cid, network), {
              contentType,
              contentLength: file.size,
              headers: standardHeaders({ ...headers, etag })
            })
          })

        if (target.kind === "file") return yield* serveFile(target, path.segments.at(-1))

        // A folder: its own URL ends with a slash, so that the relative links of its pages and listing resolve in it.
        if (!path.trailingSlash) {
          const search = request.url.includes("?") ? request.url.slice(request.url.indexOf("?")) : ""
          return HttpServerResponse.empty({ status: 301, headers: standardHeaders({ ...common, location: `${path.raw}/${search}` }) })
        }
        const index = yield* content.resolve(target.cid, ["index.html"], network).pipe(
          Effect.catchTag("PathNotFound", () => Effect.succeed(undefined))
        )
        if (index?.kind === "file") return yield* serveFile(index, "index.html")
        const etag = `"DirIndex-1_CID-${target.cid}"`
        const headers = { ...common, "content-security-policy": DirectoryListing.contentSecurityPolicy }
        return yield* unlessCurrent(etag, headers, Effect.map(content.list(target.cid, network), (entries) =>
          HttpServerResponse.text(DirectoryListing.html(`/ipfs/${[cid, ...path.segments].join("/")}/`, entries, path.segments.length === 0), {
            contentType: "text/html; charset=utf-8",
            headers: standardHeaders({ ...headers, etag })
          })))
      }).pipe(
        Effect.catchTags({
          ContentNotFound: ({ cid }) => Effect.fail(new CidRecord.ContentNotPublic({ cid })),
          PathNotFound: ({ cid }) => Effect.fail(new CidRecord.ContentNotPublic({ cid })),
          NotADirectory: ({ cid }) => Effect.fail(new CidRecord.ContentNotPublic({ cid }))
        }),
        Effect.tapErrorTag("ContentTimeout", (timeout) =>
          Effect.logWarning(`The content store did not answer ${timeout.operation} ${timeout.cid} within ${timeout.timeoutMillis} ms`))
      )

    // `/ipfs/:cid/*` serves `/ipfs/:cid` too (the router registers both).
    yield* RouteCatalog.add(router, {
      method: "GET",
      path: "/ipfs/:cid",
      summary: "The gateway: a CID's content, and what is under it at /ipfs/{cid}/{path}",
      description: "Content some workspace holds on the public network (private content through a private access " +
        "link or with an API key of a workspace that holds it): a file's bytes, typed from its name or sniffed " +
        "(never as HTML), with `Range`, `If-None-Match`, `?filename=` and `?download=true`; a folder's " +
        "`index.html` or an HTML listing (301 to the form with a trailing slash); `?format=raw|car` (or `Accept`) " +
        "its block or its DAG as a CAR. Every answer is immutable, with the CID as its ETag. `/ipfs/{cid}/{path}` " +
        "and `/files/{cid}/{path}` are the same route (docs/api.md, \"The gateway\").",
      auth: "none",
      query: GatewayQuery,
      response: { contentType: "application/octet-stream", description: "The file's bytes, a folder's page, a block or a CAR" },
      otherResponses: [
        { status: 206, contentType: "application/octet-stream", description: "The range asked for" },
        { status: 301, contentType: "text/plain", description: "A folder's URL without its trailing slash: to the form with it" }
      ],
      errors: [
        new CidRecord.ContentNotPublic({ cid: "" }),
        { _tag: "RangeNotSatisfiable", status: 416, message: "Range not satisfiable" },
        new ContentTimeout({ operation: "", cid: "", timeoutMillis: 0 })
      ]
    }, (request) => handled(serve(request)), { servedAt: "/ipfs/:cid/*" })
    yield* router.add("GET", "/files/:cid/*", (request) => handled(serve(request)))
  })
)
