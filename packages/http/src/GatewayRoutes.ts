/**
 * `GET /ipfs/{cid}` (and `GET /files/{cid}`, the path of the pinata SDK's private gateway URLs): the gateway. It
 * serves CIDs that some workspace holds on the public network, and private content through a private access link or
 * with an API key of a workspace that holds it (PrivateAccess.ts says which network a request reaches): the file's
 * bytes with a sniffed content type, or the trustless formats (`application/vnd.ipld.raw`: the root block;
 * `application/vnd.ipld.car`: the whole DAG), chosen by `Accept` or `?format=raw|car`. A signed public CID carries
 * its signature in `pinata-signature`.
 *
 * A CID no workspace holds publicly, and one the content store does not hold (its blocks gone, a store switched,
 * a directory asked for as a file), are the same 404 `Content not found`: the gateway says nothing about what else
 * exists. A remote store (Kubo) that does not answer in time is 504 `Content store timed out`, logged.
 */
import { Signatures } from "@cairn/application"
import { ContentStore } from "@cairn/content-store"
import { Cid, CidRecord } from "@cairn/domain"
import { Effect, Option, Schema } from "effect"
import { HttpRouter, type HttpServerRequest, HttpServerResponse } from "effect/http"
import * as ContentType from "./ContentType.ts"
import { handled } from "./ErrorResponse.ts"
import * as PrivateAccess from "./PrivateAccess.ts"
import { standardHeaders } from "./Respond.ts"

const formatOf = (accept: string | undefined, format: string | null) => {
  if (format === "raw" || accept?.includes("application/vnd.ipld.raw")) return "raw"
  if (format === "car" || accept?.includes("application/vnd.ipld.car")) return "car"
  return "file"
}

export const layer = HttpRouter.use((router) =>
  Effect.gen(function*() {
    const signatures = yield* Signatures
    const content = yield* ContentStore
    const access = yield* PrivateAccess.make

    const serve = (request: HttpServerRequest.HttpServerRequest) =>
      handled(Effect.gen(function*() {
        const cid = yield* Effect.flatMap(HttpRouter.params, (params) => Schema.decodeUnknownEffect(Cid)(params["cid"]))
        const query = new URL(request.url, "http://cairn").searchParams
        const network = yield* access.networkFor(request, cid, query)
        // Checked before any status goes out, so a missing root is a 404 whatever the format (a stream's failure
        // after its first byte could only break the response).
        if (!(yield* content.has(cid, network))) return yield* new CidRecord.ContentNotPublic({ cid })
        const signature = network === "public" ? yield* signatures.publicSignature(cid) : Option.none()
        const headers = standardHeaders({
          etag: `"${cid}"`,
          "cache-control": "public, max-age=29030400, immutable",
          "x-ipfs-path": `/ipfs/${cid}`,
          ...Option.match(signature, { onNone: () => ({}), onSome: (s) => ({ "pinata-signature": s.signature }) }),
          ...(network === "private" ? PrivateAccess.privateHeaders : {})
        })
        const format = formatOf(request.headers["accept"], query.get("format"))
        if (format === "raw") {
          return HttpServerResponse.uint8Array(yield* content.block(cid, network), { contentType: "application/vnd.ipld.raw", headers })
        }
        if (format === "car") {
          return HttpServerResponse.stream(content.car(cid, network), { contentType: "application/vnd.ipld.car; version=1", headers })
        }
        const contentType = yield* ContentType.sniffStream(content.cat(cid, network))
        return HttpServerResponse.stream(content.cat(cid, network), { contentType, headers })
      }).pipe(
        Effect.catchTag("ContentNotFound", ({ cid }) => Effect.fail(new CidRecord.ContentNotPublic({ cid }))),
        Effect.tapErrorTag("ContentTimeout", (timeout) =>
          Effect.logWarning(`The content store did not answer ${timeout.operation} ${timeout.cid} within ${timeout.timeoutMillis} ms`))
      ))

    yield* router.add("GET", "/ipfs/:cid", serve)
    yield* router.add("GET", "/files/:cid", serve)
  })
)
