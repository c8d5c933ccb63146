/**
 * The one rule for a relative path: a `/`-separated path that stays inside the folder it is relative to and means
 * the same thing on every system that may read it. Workspace files, uploads, template folders, skill bundles and
 * UnixFS directories all check their paths here, so a path one of them accepts is never one another refuses for
 * being unsafe. Callers with rules of their own (one segment only, no dot-folders, a repository folder) add them on
 * top, and word the refusals in their own documented messages from the `reason`.
 *
 * Refused: an empty path; NUL and the other C0 control characters and DEL (U+0000–U+001F, U+007F); lone UTF-16
 * surrogates (they have no UTF-8 form, so no file can be named by them); a backslash (a separator on Windows, an
 * escape to the UnixFS importer); an absolute path (`/x`); a Windows drive (`C:`, `c:x`, `C:\x`) as the first
 * segment; `..` segments; `.` segments and empty ones (`a//b`, `a/`); more than 4096 bytes of UTF-8 in all or more
 * than 255 in one segment (Linux's PATH_MAX and NAME_MAX, the limits the workspace and uploads already held).
 *
 * `.` and empty segments are refused rather than tidied by `validate`, so that a path has one spelling: a set of
 * paths can then be checked for duplicates and for a file that is also a folder by comparing strings. Paths people
 * type (a file to read, a folder in a repository) go through `validateLoose`, which drops them first and returns
 * the tidy form; every other refusal is the same.
 */
import { Result, Schema } from "effect"

/** The most UTF-8 bytes a whole path may have (Linux's PATH_MAX). */
export const maxBytes = 4096
/** The most UTF-8 bytes one segment may have (Linux's NAME_MAX). */
export const maxSegmentBytes = 255

/** Why a path was refused, in the order the checks run: characters first, then the path's shape, then lengths. */
export const Reason = Schema.Literals([
  "Empty",
  "Nul",
  "ControlCharacter",
  "NotUnicode",
  "Backslash",
  "Absolute",
  "DriveLetter",
  "DotDotSegment",
  "DotSegment",
  "EmptySegment",
  "TooLong",
  "SegmentTooLong"
])
export type Reason = typeof Reason.Type

const details: { readonly [reason in Reason]: string } = {
  Empty: "is empty",
  Nul: "contains a NUL character",
  ControlCharacter: "contains a control character",
  NotUnicode: "is not valid Unicode (it has a lone surrogate)",
  Backslash: "contains a backslash",
  Absolute: "is absolute",
  DriveLetter: "starts with a drive letter",
  DotDotSegment: "has a .. segment",
  DotSegment: "has a . segment",
  EmptySegment: "has an empty segment",
  TooLong: `is longer than ${maxBytes} bytes`,
  SegmentTooLong: `has a segment longer than ${maxSegmentBytes} bytes`
}

/** A path the rule refuses, with the first reason found and that reason in words (`"a//b" has an empty segment`). */
export class Problem extends Schema.TaggedError<Problem>()("RelativePathProblem", {
  path: Schema.String,
  reason: Reason,
  detail: Schema.String
}) {
  override get message() {
    return `Path ${JSON.stringify(this.path)} ${this.detail}`
  }
}

const refuse = (path: string, reason: Reason) => Result.fail(new Problem({ path, reason, detail: details[reason] }))

const encoder = new TextEncoder()
/** The length of `text` in UTF-8, the unit file systems count names in. */
export const utf8Bytes = (text: string) => encoder.encode(text).length

// C0 controls (NUL apart, it has a reason of its own) and DEL.
const control = /[\u0001-\u001f\u007f]/
const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/
const drive = /^[A-Za-z]:/

const check = (path: string, loose: boolean): Result.Result<string, Problem> => {
  if (path === "") return refuse(path, "Empty")
  if (path.includes("\0")) return refuse(path, "Nul")
  if (control.test(path)) return refuse(path, "ControlCharacter")
  if (loneSurrogate.test(path)) return refuse(path, "NotUnicode")
  if (path.includes("\\")) return refuse(path, "Backslash")
  if (path.startsWith("/")) return refuse(path, "Absolute")
  const all = path.split("/")
  const segments = loose ? all.filter((segment) => segment !== "" && segment !== ".") : all
  if (segments.length > 0 && drive.test(segments[0]!)) return refuse(path, "DriveLetter")
  if (segments.includes("..")) return refuse(path, "DotDotSegment")
  if (segments.includes(".")) return refuse(path, "DotSegment")
  if (segments.includes("")) return refuse(path, "EmptySegment")
  // Only a loose path can be left with nothing (".", "./"): it names the folder itself, not something in it.
  if (segments.length === 0) return refuse(path, "Empty")
  if (utf8Bytes(path) > maxBytes) return refuse(path, "TooLong")
  if (segments.some((segment) => utf8Bytes(segment) > maxSegmentBytes)) return refuse(path, "SegmentTooLong")
  return Result.succeed(loose ? segments.join("/") : path)
}

/** `path` itself when it is a relative path, already in its one spelling; otherwise the first problem found. */
export const validate = (path: string): Result.Result<string, Problem> => check(path, false)

/**
 * For paths people type: `.` segments and empty ones (`./a//b/`) are dropped, and the tidy path (`a/b`) returned.
 * Everything else is refused as `validate` refuses it; the length is that of the path as given. A path that is
 * left with nothing (`.`, `./`) is refused as `Empty`.
 */
export const validateLoose = (path: string): Result.Result<string, Problem> => check(path, true)

/** Whether `validate` accepts `path`. */
export const isRelativePath = (path: string): boolean => Result.isSuccess(validate(path))
