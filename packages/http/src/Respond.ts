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

/** A JSON body; `JSON.stringify` is done here so the content type carries the charset the spec asks for. */
export const json = (body: unknown, status = 200, headers: Record<string, string> = {}) =>
  HttpServerResponse.text(JSON.stringify(body), {
    status,
    contentType: "application/json; charset=utf-8",
    headers: standardHeaders(headers)
  })

/** The v3 success envelope. */
export const data = (value: unknown, status = 200) => json({ data: value }, status)

export const noContent = (headers: Record<string, string> = {}) =>
  HttpServerResponse.empty({ status: 204, headers: standardHeaders(headers) })
