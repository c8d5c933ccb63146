/**
 * The rules for files going into and out of an agent's workspace. An upload's `filename` is one path segment
 * (written to `uploads/<filename>`): a relative path by `RelativePath`'s rule (no control characters, NUL included,
 * no lone surrogates, no backslash, no drive letter, at most 255 bytes of UTF-8) that is also not `.` or `..`, has
 * no `/`, no `..` anywhere in it and no C1 control character. Its `contentBase64` is strict base64 (RFC 4648 §4,
 * padded): no data-URL prefix, no whitespace or line breaks, no other alphabet (base64url's `-` and `_`), no
 * misplaced or missing padding, no stray bits in the last character. A path to read is a relative path, loosely
 * written (`RelativePath.validateLoose`), that never climbs out of the workspace. Failures are 400
 * `Validation failed: <detail>`.
 */
import { Result } from "effect"
import * as RelativePath from "../RelativePath.ts"
import { ValidationFailed } from "../ValidationFailed.ts"

export const maxFilenameBytes = RelativePath.maxSegmentBytes
export const maxPathBytes = RelativePath.maxBytes

/** Where an upload named `filename` goes, relative to the workspace. */
export const uploadPath = (filename: string) => `uploads/${filename}`

const fail = (detail: string) => Result.fail(new ValidationFailed({ detail }))
// C1 controls: refused here on top of RelativePath's C0 controls and DEL (they are invisible in a name).
const c1Control = /[\u0080-\u009f]/

/** A filename's refusal, in the words uploads have always used. */
const filenameProblem = (problem: RelativePath.Problem): string => {
  switch (problem.reason) {
    case "Nul":
    case "ControlCharacter":
      return "filename must not contain control characters"
    case "NotUnicode":
      return "filename must be valid Unicode"
    case "TooLong":
    case "SegmentTooLong":
      return `filename must be at most ${maxFilenameBytes} bytes`
    case "DriveLetter":
      return "filename must not start with a drive letter (C:)"
    default:
      // Empty, absolute, backslash and . or .. names are refused before the rule is asked.
      return `filename ${problem.detail}`
  }
}

export const validateFilename = (filename: unknown): Result.Result<string, ValidationFailed> => {
  if (filename === undefined || filename === null || filename === "") return fail("filename is required")
  if (typeof filename !== "string") return fail("filename must be a string")
  if (filename === "." || filename === "..") return fail("filename must not be . or ..")
  if (filename.includes("/") || filename.includes("\\")) return fail("filename must not contain / or \\")
  if (filename.includes("..")) return fail("filename must not contain ..")
  if (c1Control.test(filename)) return fail("filename must not contain control characters")
  return Result.mapError(RelativePath.validate(filename), (problem) => new ValidationFailed({ detail: filenameProblem(problem) }))
}

const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
const values = new Int8Array(128).fill(-1)
for (let i = 0; i < alphabet.length; i++) values[alphabet.charCodeAt(i)] = i

const valueAt = (text: string, i: number) => {
  const code = text.charCodeAt(i)
  return code < 128 ? values[code]! : -1
}

/** Why `text` is not strict base64, named by its first offence. */
const offence = (text: string): string => {
  if (/^data:/i.test(text)) return "contentBase64 must be plain base64, without a data: URL prefix"
  if (/\s/.test(text)) return "contentBase64 must not contain whitespace or line breaks"
  const padding = text.indexOf("=")
  for (let i = 0; i < (padding === -1 ? text.length : padding); i++) {
    if (valueAt(text, i) < 0) return `contentBase64 has a character outside the base64 alphabet at offset ${i}`
  }
  if (padding !== -1 && (padding < text.length - 2 || !/^=+$/.test(text.slice(padding)))) {
    return "contentBase64 has padding (=) before its end"
  }
  if (text.length % 4 !== 0) return "contentBase64 must be padded with = to a multiple of 4 characters"
  return "contentBase64 has non-zero bits in its padding (not canonical base64)"
}

/** The bytes strict base64 `text` encodes. */
export const decodeBase64 = (text: unknown): Result.Result<Uint8Array, ValidationFailed> => {
  if (text === undefined || text === null) return fail("contentBase64 is required")
  if (typeof text !== "string") return fail("contentBase64 must be a string")
  const length = text.length
  if (length % 4 !== 0) return fail(offence(text))
  const padding = length === 0 ? 0 : text.charCodeAt(length - 1) !== 61 ? 0 : text.charCodeAt(length - 2) === 61 ? 2 : 1
  const out = new Uint8Array((length / 4) * 3 - padding)
  const full = padding === 0 ? length : length - 4
  let j = 0
  for (let i = 0; i < full; i += 4) {
    const a = valueAt(text, i), b = valueAt(text, i + 1), c = valueAt(text, i + 2), d = valueAt(text, i + 3)
    if ((a | b | c | d) < 0) return fail(offence(text))
    const n = (a << 18) | (b << 12) | (c << 6) | d
    out[j++] = n >> 16
    out[j++] = (n >> 8) & 0xff
    out[j++] = n & 0xff
  }
  if (padding > 0) {
    const a = valueAt(text, full), b = valueAt(text, full + 1)
    const c = padding === 1 ? valueAt(text, full + 2) : 0
    // The bits past the last byte must be zero, so each content has exactly one encoding.
    if ((a | b | c) < 0 || (padding === 2 ? b & 0x0f : c & 0x03) !== 0) return fail(offence(text))
    const n = (a << 18) | (b << 12) | (c << 6)
    out[j++] = n >> 16
    if (padding === 1) out[j++] = (n >> 8) & 0xff
  }
  return Result.succeed(out)
}

/** A read path's refusal, in the words reads have always used. */
const readPathProblem = (problem: RelativePath.Problem): string => {
  switch (problem.reason) {
    case "Empty":
      return "path must name a file"
    case "Absolute":
    case "DriveLetter":
      return "path must be relative to the workspace"
    case "Backslash":
      return "path must use / as separator, not \\"
    case "Nul":
    case "ControlCharacter":
    case "NotUnicode":
      return "path must not contain control characters"
    case "DotDotSegment":
      return "path must not contain .. (it stays inside the workspace)"
    case "TooLong":
    case "SegmentTooLong":
      return `path must be at most ${maxPathBytes} bytes, each name at most ${maxFilenameBytes}`
    default:
      // A loose path has its . and empty segments dropped, never refused.
      return `path ${problem.detail}`
  }
}

/**
 * A path to read from the workspace, as the engine takes it: relative, `/`-separated, `.` and empty segments
 * dropped (`RelativePath.validateLoose`); absolute paths, drive letters, `..`, `\` and control characters (C1
 * included) refused.
 */
export const validateReadPath = (path: unknown): Result.Result<string, ValidationFailed> => {
  if (typeof path !== "string" || path === "") return fail("path is required")
  if (c1Control.test(path)) return fail("path must not contain control characters")
  return Result.mapError(RelativePath.validateLoose(path), (problem) => new ValidationFailed({ detail: readPathProblem(problem) }))
}

/**
 * The largest JSON body that can carry an upload of `maxBytes` decoded bytes: its padded base64, and 64 KiB for
 * the field names, the filename (255 bytes, 1.5 KiB once escaped) and whitespace. A body past it is refused while
 * it is read, before it is held whole.
 */
export const maxBodyBytes = (maxBytes: number) => 4 * Math.ceil(maxBytes / 3) + 64 * 1024
