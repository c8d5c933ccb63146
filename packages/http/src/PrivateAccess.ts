/**
 * Which network the gateway serves a CID from, for one request. A URL with a signature (`X-Signature`: a private
 * access link, SignedUrlRoutes.ts) is judged as one: a valid link for this CID, still held privately by the workspace
 * that signed it, is served from the private network; any other is 403 with the reason (expired, altered, another
 * CID's). Otherwise content some workspace holds publicly is public, whatever else the request carries. Otherwise a
 * bearer API key with `org:files:read` whose workspace holds the CID privately reaches the private copy (a bad key is
 * 401, as on the API). Anything else is 404 `Content not found`: the gateway says nothing of what exists privately.
 * Private content is never cached by shared caches and never leaks its URL (the signature) as a referrer.
 */
import { ApiKeys, Files, SignedUrls } from "@cairn/application"
import { CidRecord, type Network } from "@cairn/domain"
import { Effect } from "effect"
import type { HttpServerRequest } from "effect/http"
import { requireScope } from "./Authenticate.ts"
import * as SignedUrlQuery from "./SignedUrlQuery.ts"

/** The headers a response of private content carries, beside the gateway's own. */
export const privateHeaders: Readonly<Record<string, string>> = {
  "cache-control": "private",
  "referrer-policy": "no-referrer"
}

export const make = Effect.gen(function*() {
  const files = yield* Files
  const keys = yield* ApiKeys
  const signedUrls = yield* SignedUrls

  /** The network to serve `cid` from for this request, or why not. */
  const networkFor = (request: HttpServerRequest.HttpServerRequest, cid: string, query: URLSearchParams) =>
    Effect.gen(function*() {
      if (SignedUrlQuery.isSigned(query)) {
        yield* signedUrls.openLink(yield* SignedUrlQuery.read(query), { cid, method: request.method })
        return "private" satisfies Network
      }
      if (yield* files.isPublic(cid)) return "public" satisfies Network
      if (request.headers["authorization"] === undefined) return yield* new CidRecord.ContentNotPublic({ cid })
      const principal = yield* requireScope(keys, request, "org:files:read")
      if (yield* files.holds(principal.workspaceId, "private", cid)) return "private" satisfies Network
      return yield* new CidRecord.ContentNotPublic({ cid })
    })

  return { networkFor }
})
