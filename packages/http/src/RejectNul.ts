/**
 * NUL is never meaningful in Cairn's input, and Postgres cannot store it in text: a path segment or query value
 * holding one, raw or percent-encoded (also double-encoded, `%2500`, since a route may decode once more), is
 * refused at the edge (RequestEdge.ts) with 400 `Validation failed: …`, before any route, so it can never surface
 * as a database failure (a 500, or a 503 that would report a false outage). JSON bodies are checked where they are
 * parsed (Body.ts, `rejectNul`).
 */
import { ValidationFailed } from "@cairn/domain"
import { fromError } from "./ErrorResponse.ts"

const encodedNul = /%(?:25)*00/i

/** Whether a request target (path and query) carries a NUL character in any encoding. */
export const hasNul = (url: string) => url.includes("\u0000") || encodedNul.test(url)

/** The answer to a request whose target carries a NUL (RequestEdge.ts checks every request before routing). */
export const refusal = () => fromError(new ValidationFailed({ detail: "the request path or query contains a NUL character" }))

/** A JSON.parse reviver that refuses NUL in any string or key of the document. */
export const nulFreeReviver = (key: string, value: unknown) => {
  if (key.includes("\u0000") || (typeof value === "string" && value.includes("\u0000"))) {
    throw new NulInJson()
  }
  return value
}

export class NulInJson extends Error {}
