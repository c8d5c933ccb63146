/**
 * A failure a client is told about: every such error carries the HTTP status and the exact message the service
 * interface documents, so the HTTP layer maps them all in one place and handlers never build error bodies.
 */
export interface DocumentedError {
  readonly _tag: string
  readonly status: number
  readonly message: string
}

export const isDocumentedError = (u: unknown): u is DocumentedError =>
  typeof u === "object" && u !== null && typeof (u as DocumentedError).status === "number" &&
  typeof (u as DocumentedError).message === "string" && typeof (u as DocumentedError)._tag === "string"
