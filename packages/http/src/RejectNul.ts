/**
 * NUL is never meaningful in Cairn's input, and Postgres cannot store it in text: a path segment or query value
 * holding one, raw or percent-encoded (also double-encoded, `%2500`, since a route may decode once more), is
 * refused at the edge with 400 `Validation failed: …`, before any route, so it can never surface as a database
 * failure (a 500, or a 503 that would report a false outage). JSON bodies are checked where they are parsed
 * (Body.ts, `rejectNul`).
 */
import { ValidationFailed } from "@cairn/domain"
import { Effect } from "effect"
import { HttpRouter, HttpServerRequest } from "effect/http"
import { fromError } from "./ErrorResponse.ts"

const encodedNul = /%(?:25)*00/i

/** Whether a request target (path and query) carries a NUL character in any encoding. */
export const hasNul = (url: string) => url.includes("\u0000") || encodedNul.test(url)

export const layer = HttpRouter.middleware(
  // No generator: this runs for every request.
  (httpEffect) =>
    Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
      hasNul(request.url)
        ? fromError(new ValidationFailed({ detail: "the request path or query contains a NUL character" }))
        : httpEffect),
  { global: true }
)

/** A JSON.parse reviver that refuses NUL in any string or key of the document. */
export const nulFreeReviver = (key: string, value: unknown) => {
  if (key.includes("\u0000") || (typeof value === "string" && value.includes("\u0000"))) {
    throw new NulInJson()
  }
  return value
}

export class NulInJson extends Error {}
