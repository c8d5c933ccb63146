/**
 * How failures reach clients. A documented error carries the HTTP status and the exact message the service
 * interface documents, so the HTTP layer maps them all in one place and handlers never build error bodies. An
 * infrastructure failure (a store, the engine, a verifier out of reach) says so with `unavailable: true`; clients
 * get 503 and the cause goes to the log, whichever port it came from.
 */
export interface DocumentedError {
  readonly _tag: string
  readonly status: number
  readonly message: string
  /** Fields the response body carries beside `error` (e.g. the agent a failed create still made). */
  readonly details?: Readonly<Record<string, unknown>>
  /** When to try again, in seconds, for a refusal that passes by itself (sent as `Retry-After`). */
  readonly retryAfterSeconds?: number
}

export const isDocumentedError = (u: unknown): u is DocumentedError =>
  typeof u === "object" && u !== null && typeof (u as DocumentedError).status === "number" &&
  typeof (u as DocumentedError).message === "string" && typeof (u as DocumentedError)._tag === "string"

/** The field every port's "could not be reached" error sets. */
export interface Unavailable {
  readonly unavailable: true
}

export const isUnavailable = (u: unknown): u is Unavailable =>
  typeof u === "object" && u !== null && (u as Unavailable).unavailable === true
