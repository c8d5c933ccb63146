/**
 * How every Cairn response is built: JSON with `charset=utf-8`, HSTS (spec 4.3), and the `{data: …}` envelope of the
 * v3 API. Handlers return through these helpers only. The `X-Request-Id` the spec asks for is set on every response,
 * these and all others, by RequestObservability.ts.
 */
import { HttpServerResponse } from "effect/http"

const hsts = "max-age=31536000; includeSubDomains"

export const standardHeaders = (headers: Record<string, string> = {}): Record<string, string> => ({
  "strict-transport-security": hsts,
  ...headers
})

const jsonType = { contentType: "application/json; charset=utf-8" } as const

/**
 * A JSON body; `JSON.stringify` is done here so the content type carries the charset the spec asks for. The common
 * case (no extra headers) sets HSTS on the response's own fresh headers: passing a record instead costs a copy and a
 * prototype change per response, a measurable part of a cached GET (docs/performance.md, bench:http).
 */
export const json = (body: unknown, status = 200, headers?: Record<string, string>) => {
  const response = HttpServerResponse.setHeader(
    HttpServerResponse.text(JSON.stringify(body), status === 200 ? jsonType : { ...jsonType, status }),
    "strict-transport-security",
    hsts
  )
  return headers === undefined ? response : HttpServerResponse.setHeaders(response, headers)
}

/** The v3 success envelope. */
export const data = (value: unknown, status = 200) => json({ data: value }, status)

export const noContent = (headers: Record<string, string> = {}) =>
  HttpServerResponse.empty({ status: 204, headers: standardHeaders(headers) })
