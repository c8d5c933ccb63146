/**
 * What a gateway request asks for, read from its raw parts: the CID and the path under it (`/ipfs/<cid>/<path…>`, or
 * `/files/<cid>/<path…>`),
 * the byte range (`Range`, `If-Range`), whether the client's copy is current (`If-None-Match`), and how the file
 * should be presented (`?filename=`, `?download=true` as `Content-Disposition`). Pure, so every rule is tested on
 * its own (GatewayRequest.test.ts).
 *
 * The path is read from the request target as the client sent it, never from a URL parser that would resolve
 * `..` (or `%2e%2e`) first: a segment that is `.` or `..` once percent-decoded, or that decodes to a name holding a
 * `/` (`%2F`), is refused with 400, so no spelling of a path reaches outside the CID or names something other than
 * what its segments say.
 */
import { ValidationFailed } from "@cairn/domain"
import { Result } from "effect"

export interface GatewayPath {
  /** The CID's segment, percent-decoded (checked by the route with the Cid schema). */
  readonly cid: string
  /** The names under the CID, percent-decoded; empty segments (`a//b`) are dropped. */
  readonly segments: ReadonlyArray<string>
  /** Whether the path ends with `/` after the CID (`/ipfs/<cid>/`, `/ipfs/<cid>/docs/`): a folder's own form. */
  readonly trailingSlash: boolean
  /** The path as sent, up to the query (`/ipfs/<cid>/docs`), for the redirect to the folder's form. */
  readonly raw: string
}

const decode = (segment: string): Result.Result<string, ValidationFailed> => {
  try {
    return Result.succeed(decodeURIComponent(segment))
  } catch {
    return Result.fail(new ValidationFailed({ detail: `the path segment "${segment}" is not valid percent-encoding` }))
  }
}

/** The path part of a request target: an origin-form target as it is, an absolute-form one without its origin. */
const pathOf = (target: string) => {
  const query = target.indexOf("?")
  const path = query === -1 ? target : target.slice(0, query)
  const origin = /^[a-z][a-z0-9+.-]*:\/\/[^/]*/i.exec(path)
  return origin === null ? path : path.slice(origin[0].length)
}

/** Reads `/ipfs/<cid>/<path…>` from the raw request target (`request.url`). */
export const parsePath = (target: string): Result.Result<GatewayPath, ValidationFailed> => {
  const raw = pathOf(target)
  const [first = "", ...rest] = raw.replace(/^\/(ipfs|files)\//, "").split("/")
  const cid = decode(first)
  if (Result.isFailure(cid)) return Result.fail(cid.failure)
  const segments: Array<string> = []
  for (const segment of rest) {
    if (segment === "") continue
    const name = decode(segment)
    if (Result.isFailure(name)) return Result.fail(name.failure)
    if (name.success === "." || name.success === "..") {
      return Result.fail(new ValidationFailed({ detail: `the path has a "${segment}" segment: a path cannot climb out of its CID` }))
    }
    if (name.success.includes("/")) {
      return Result.fail(new ValidationFailed({ detail: `the path segment "${segment}" holds an encoded slash: a segment is one name` }))
    }
    segments.push(name.success)
  }
  return Result.succeed({ cid: cid.success, segments, trailingSlash: rest.length > 0 && rest.at(-1) === "", raw })
}

export type RangeAnswer =
  | { readonly _tag: "Whole" }
  | { readonly _tag: "Part"; readonly start: number; readonly end: number }
  | { readonly _tag: "Unsatisfiable" }

const whole: RangeAnswer = { _tag: "Whole" }

/**
 * What to answer a `Range` header for a representation of `size` bytes (RFC 9110 section 14): one range
 * (`bytes=a-b`, `bytes=a-`, `bytes=-n`) is a Part (`end` inclusive, cut at the last byte); one that starts past the
 * end, or a suffix of 0 bytes, is Unsatisfiable (416); no header, a header with several ranges, one in other units
 * or one that does not parse is ignored (the whole representation, 200), as the RFC allows. With `If-Range`, the
 * range is honoured only when it names the current ETag (a date never does: these responses have no
 * Last-Modified).
 */
export const parseRange = (header: string | undefined, ifRange: string | undefined, etag: string, size: number): RangeAnswer => {
  if (header === undefined) return whole
  if (ifRange !== undefined && ifRange.trim() !== etag) return whole
  const range = /^bytes=(\d*)-(\d*)$/i.exec(header.trim())
  if (range === null) return whole
  const [, first = "", last = ""] = range
  if (first === "" && last === "") return whole
  if (first === "") {
    const suffix = Number(last)
    return suffix === 0 || size === 0 ? { _tag: "Unsatisfiable" } : { _tag: "Part", start: Math.max(size - suffix, 0), end: size - 1 }
  }
  const start = Number(first)
  if (last !== "" && Number(last) < start) return whole
  if (start >= size) return { _tag: "Unsatisfiable" }
  return { _tag: "Part", start, end: last === "" ? size - 1 : Math.min(Number(last), size - 1) }
}

/** Whether `If-None-Match` names `etag` (weak comparison, RFC 9110 section 13.1.2) or is `*`. */
export const notModified = (ifNoneMatch: string | undefined, etag: string) =>
  ifNoneMatch !== undefined && ifNoneMatch.split(",").some((tag) => {
    const trimmed = tag.trim()
    return trimmed === "*" || trimmed.replace(/^W\//, "") === etag.replace(/^W\//, "")
  })

/** RFC 8187's encoding of a header parameter value: UTF-8, percent-encoded beyond the attribute characters. */
const extValue = (value: string) =>
  encodeURIComponent(value).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)

/**
 * `Content-Disposition` for `?filename=` (inline, under that name) and `?download=true` (attachment, under the
 * filename given, else `fallback`: the path's last name or the CID); undefined when neither is asked for. The name
 * goes out twice (RFC 6266): `filename*` in UTF-8, and `filename` in printable ASCII with anything else (quotes,
 * backslashes, control characters, non-ASCII) as `_`, so no name can break the header.
 */
export const contentDisposition = (filename: string | null, download: string | null, fallback: string): string | undefined => {
  const attachment = download === "true"
  if (!attachment && (filename === null || filename === "")) return undefined
  const name = filename !== null && filename !== "" ? filename : fallback
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, "_")
  return `${attachment ? "attachment" : "inline"}; filename="${ascii}"; filename*=UTF-8''${extValue(name)}`
}
