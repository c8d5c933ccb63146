/**
 * The one place failures become responses: a documented error gives `{error: <its message>}` with its status;
 * input that does not decode gives 400 `Validation failed: <detail>`; anything else is a 500 with a generic
 * message, and the cause goes to the log, never to the client. A 401 also says why in `reason` and in its
 * `WWW-Authenticate` challenge (Authenticate.ts). A port that could not be reached answers 503; a
 * database error is classified by its SQLSTATE first (DatabaseFailure.ts), so bad input the database refused is a
 * 400 and a database bug is a 500, never a false outage.
 */
import { isDocumentedError, isUnavailable } from "@cairn/domain"
import { Cause, Effect } from "effect"
import type { HttpServerResponse } from "effect/http"
import { challenge } from "./Authenticate.ts"
import * as DatabaseFailure from "./DatabaseFailure.ts"
import { json } from "./Respond.ts"

const schemaDetail = (error: { readonly message: string }) => error.message.replace(/\s+/g, " ").trim()

export const fromError = (error: unknown): Effect.Effect<HttpServerResponse.HttpServerResponse> => {
  if (isDocumentedError(error)) {
    // A 401 carries its challenge (RFC 9110 section 15.5.2), which repeats why the credential was refused.
    const headers: Record<string, string> = error.status === 401 ? { "www-authenticate": challenge(error) } : {}
    if (error.retryAfterSeconds !== undefined) headers["retry-after"] = String(error.retryAfterSeconds)
    return Effect.succeed(json({ error: error.message, ...error.details }, error.status, headers))
  }
  const tag = (error as { _tag?: unknown })?._tag
  if (tag === "SchemaError") return Effect.succeed(json({ error: `Validation failed: ${schemaDetail(error as Error)}` }, 400))
  if (tag === "MultipartError") {
    const reason = (error as { reason?: { _tag?: string } }).reason?._tag
    if (reason === "FileTooLarge" || reason === "BodyTooLarge") return Effect.succeed(json({ error: "File too large" }, 413))
  }
  if (tag === "RequestError" || tag === "MultipartError") {
    return Effect.succeed(json({ error: `Validation failed: the request body could not be read (${schemaDetail(error as Error)})` }, 400))
  }
  const database = DatabaseFailure.classify(error)
  if (database === "bad-input") {
    return Effect.logWarning("Input refused by the database", error).pipe(
      Effect.as(json({ error: "Validation failed: the request holds a value that cannot be stored (such as a NUL character)" }, 400))
    )
  }
  if (database === "bug") {
    return Effect.logError("Unexpected database failure", error).pipe(Effect.as(json({ error: "Internal server error" }, 500)))
  }
  if (isUnavailable(error)) {
    return Effect.logError("Backend unavailable", error).pipe(Effect.as(json({ error: "Service unavailable" }, 503)))
  }
  return Effect.logError("Unexpected failure", error).pipe(Effect.as(json({ error: "Internal server error" }, 500)))
}

/** Makes a handler total: its failures and defects become responses. */
export const handled = <E, R>(
  handler: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
): Effect.Effect<HttpServerResponse.HttpServerResponse, never, R> =>
  handler.pipe(
    Effect.catchCause((cause) => {
      const failure = Cause.findErrorOption(cause)
      return failure._tag === "Some"
        ? fromError(failure.value)
        : Effect.logError("Defect in handler", cause).pipe(Effect.as(json({ error: "Internal server error" }, 500)))
    })
  )
