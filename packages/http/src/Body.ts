/**
 * Request bodies that must be JSON whatever their Content-Type says: the pinata SDK sometimes sends JSON labelled
 * `text/plain`. A body that is not JSON, or not the expected shape, is 400 `Validation failed: <detail>`.
 */
import { Bytes, ValidationFailed } from "@cairn/domain"
import { Effect, Schema } from "effect"
import type { HttpServerRequest } from "effect/http"
import { parseWithLargeString } from "./LargeStringField.ts"
import { NulInJson, nulFreeReviver } from "./RejectNul.ts"

/** The body's JSON holds a NUL character: a ValidationFailed that a route with its own documented error can tell apart. */
export const nulDetail = "the request body contains a NUL character"

const notJson = (error: unknown) =>
  new ValidationFailed({ detail: error instanceof NulInJson ? nulDetail : "the request body is not valid JSON" })

export const json = <S extends Schema.Codec<unknown, unknown>>(request: HttpServerRequest.HttpServerRequest, schema: S) =>
  Effect.gen(function*() {
    const text = yield* request.text
    let value: unknown
    try {
      value = JSON.parse(text, nulFreeReviver)
    } catch (error) {
      return yield* notJson(error)
    }
    return yield* Schema.decodeUnknownEffect(schema)(value)
  })

/**
 * A raw body of at most `maxBytes`, counted while it streams in, so an oversized one is refused without being
 * held: `tooLarge` is the failure then.
 */
export const bytes = <E>(request: HttpServerRequest.HttpServerRequest, maxBytes: number, tooLarge: () => E) =>
  Bytes.collectWithin(request.stream, maxBytes, tooLarge)

/** The body's length as its `Content-Length` declares it; undefined when it declares none (a streamed body). */
export const declaredLength = (request: HttpServerRequest.HttpServerRequest): number | undefined => {
  const declared = request.headers["content-length"]
  return declared !== undefined && /^\d+$/.test(declared) ? Number(declared) : undefined
}

/** Whether the request's `Content-Length` already says its body is over `maxBytes` (refused before it is read). */
export const declaresMoreThan = (request: HttpServerRequest.HttpServerRequest, maxBytes: number) =>
  Number(request.headers["content-length"] ?? Number.NaN) > maxBytes

/**
 * A JSON body of at most `maxBytes`, counted while it streams in (`tooLarge` past it, or at once when its
 * Content-Length says so): for bodies that may be big (an upload's base64), never held beyond the limit.
 */
export const jsonWithin = <S extends Schema.Codec<unknown, unknown>, E>(
  request: HttpServerRequest.HttpServerRequest,
  schema: S,
  maxBytes: number,
  tooLarge: () => E,
  /** A field expected to hold most of the body (an upload's base64), taken from the bytes (LargeStringField.ts). */
  largeStringField?: string
) =>
  Effect.gen(function*() {
    if (declaresMoreThan(request, maxBytes)) return yield* Effect.fail(tooLarge())
    const raw = yield* bytes(request, maxBytes, tooLarge)
    let value: unknown
    try {
      value = (largeStringField === undefined ? undefined : parseWithLargeString(raw, largeStringField)) ??
        JSON.parse(new TextDecoder().decode(raw), nulFreeReviver)
    } catch (error) {
      return yield* notJson(error)
    }
    return yield* Schema.decodeUnknownEffect(schema)(value)
  })
