/**
 * The public address of a request's origin, for absolute URLs a client is handed back (a resumable upload's
 * `Location`, a signed URL): `X-Forwarded-Proto` and `X-Forwarded-Host` behind a proxy, else the `Host` it came to.
 */
import type { HttpServerRequest } from "effect/http"

export const origin = (request: HttpServerRequest.HttpServerRequest) => {
  const proto = request.headers["x-forwarded-proto"]?.split(",")[0]?.trim() ?? "http"
  const host = request.headers["x-forwarded-host"] ?? request.headers["host"] ?? "localhost"
  return `${proto}://${host}`
}
