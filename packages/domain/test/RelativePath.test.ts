import { RelativePath } from "@cairn/domain"
import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"

/** What the rule says of a path: "accepted" or the reason it refuses it. */
const verdict = (result: Result.Result<string, RelativePath.Problem>) => Result.isFailure(result) ? result.failure.reason : "accepted"

const longest = "x".repeat(RelativePath.maxSegmentBytes)
// 4096 bytes exactly: sixteen 254-byte names, a 16-byte one and the 16 slashes between them.
const fullLength = [...Array.from({ length: 16 }, () => "x".repeat(254)), "y".repeat(16)].join("/")

/** Every input, strictly: accepted as given, or refused with the first reason. */
const table: ReadonlyArray<readonly [string, RelativePath.Reason | "accepted"]> = [
  ["a", "accepted"],
  ["a/b/c.txt", "accepted"],
  [".env", "accepted"],
  ["a/.hidden/b", "accepted"],
  ["a..b/c", "accepted"],
  ["...", "accepted"],
  ["with space/données.csv", "accepted"],
  ["emoji/😀.txt", "accepted"],
  ["ab:c", "accepted"],
  ["x/a:b", "accepted"],
  ["ab:/c", "accepted"],
  ["a/C:/b", "accepted"],
  ["1:x", "accepted"],
  [longest, "accepted"],
  ["x".repeat(84) + "é".repeat(85), "accepted"],
  [fullLength, "accepted"],

  ["", "Empty"],
  ["a\0b", "Nul"],
  ["\0", "Nul"],
  ["a\nb", "ControlCharacter"],
  ["a\tb", "ControlCharacter"],
  ["a\u0001", "ControlCharacter"],
  ["a\u001fb", "ControlCharacter"],
  ["a\u007fb", "ControlCharacter"],
  ["a\uD800b", "NotUnicode"],
  ["a\uDC00", "NotUnicode"],
  ["a\\b", "Backslash"],
  ["a\\..\\b", "Backslash"],
  ["c:\\windows", "Backslash"],
  ["/", "Absolute"],
  ["/etc/passwd", "Absolute"],
  ["//server/share", "Absolute"],
  ["C:", "DriveLetter"],
  ["c:x", "DriveLetter"],
  ["C:/Windows", "DriveLetter"],
  ["z:", "DriveLetter"],
  ["a:b", "DriveLetter"],
  ["..", "DotDotSegment"],
  ["../x", "DotDotSegment"],
  ["a/../../b", "DotDotSegment"],
  ["a/..", "DotDotSegment"],
  [".", "DotSegment"],
  ["./a", "DotSegment"],
  ["a/./b", "DotSegment"],
  ["a//b", "EmptySegment"],
  ["a/", "EmptySegment"],
  ["x".repeat(RelativePath.maxBytes + 1), "TooLong"],
  [fullLength + "y", "TooLong"],
  ["é".repeat(2049), "TooLong"],
  ["x".repeat(256), "SegmentTooLong"],
  ["a/" + "é".repeat(128), "SegmentTooLong"],

  // The first reason wins: characters, then shape, then length.
  ["/a\\b", "Backslash"],
  ["../a\0", "Nul"],
  ["/../x", "Absolute"],
  ["C:/../x", "DriveLetter"],
  ["a/./../b", "DotDotSegment"],
  ["a//./b", "DotSegment"],
  ["../" + "x".repeat(300), "DotDotSegment"]
]

describe("a relative path", () => {
  it("is accepted or refused as the table says", () => {
    for (const [path, expected] of table) assert.strictEqual(verdict(RelativePath.validate(path)), expected, JSON.stringify(path))
  })

  it("is returned as given when accepted, and isRelativePath agrees with validate", () => {
    for (const [path, expected] of table) {
      if (expected === "accepted") assert.deepStrictEqual(RelativePath.validate(path), Result.succeed(path))
      assert.strictEqual(RelativePath.isRelativePath(path), expected === "accepted", JSON.stringify(path))
    }
  })

  it("counts lengths in UTF-8 bytes", () => {
    assert.strictEqual(RelativePath.utf8Bytes("é😀a"), 2 + 4 + 1)
    assert.strictEqual(RelativePath.utf8Bytes(fullLength), RelativePath.maxBytes)
  })

  it("says why in words, with the path quoted", () => {
    const problem = RelativePath.validate("a//b")
    assert.deepInclude(Result.isFailure(problem) ? problem.failure : {}, {
      _tag: "RelativePathProblem",
      path: "a//b",
      reason: "EmptySegment",
      detail: "has an empty segment"
    })
    const details: ReadonlyArray<readonly [string, string]> = [
      ["", "is empty"],
      ["a\0", "contains a NUL character"],
      ["a\n", "contains a control character"],
      ["a\uD800", "is not valid Unicode (it has a lone surrogate)"],
      ["a\\b", "contains a backslash"],
      ["/a", "is absolute"],
      ["C:a", "starts with a drive letter"],
      ["../a", "has a .. segment"],
      ["./a", "has a . segment"],
      ["a//b", "has an empty segment"],
      ["x".repeat(4097), "is longer than 4096 bytes"],
      ["x".repeat(256), "has a segment longer than 255 bytes"]
    ]
    for (const [path, detail] of details) {
      const result = RelativePath.validate(path)
      assert.strictEqual(Result.isFailure(result) ? result.failure.detail : "accepted", detail, JSON.stringify(path))
      assert.strictEqual(Result.isFailure(result) ? result.failure.message : "accepted", `Path ${JSON.stringify(path)} ${detail}`)
    }
  })
})

describe("a loosely written relative path", () => {
  it("drops . and empty segments and returns the tidy path", () => {
    const tidied: ReadonlyArray<readonly [string, string]> = [
      ["a", "a"],
      ["./a", "a"],
      ["././a/./b", "a/b"],
      ["notes//today.md", "notes/today.md"],
      ["a/b/", "a/b"],
      ["a//./b//", "a/b"]
    ]
    for (const [path, tidy] of tidied) assert.deepStrictEqual(RelativePath.validateLoose(path), Result.succeed(tidy), JSON.stringify(path))
  })

  it("refuses everything else as the strict rule does", () => {
    const refused: ReadonlyArray<readonly [string, RelativePath.Reason]> = [
      ["", "Empty"],
      [".", "Empty"],
      ["./", "Empty"],
      ["././/", "Empty"],
      ["/a", "Absolute"],
      ["./C:/x", "DriveLetter"],
      ["./../x", "DotDotSegment"],
      ["a/./..", "DotDotSegment"],
      ["a\\b", "Backslash"],
      ["a/\0", "Nul"],
      ["a/\u007f", "ControlCharacter"],
      ["a/\uDBFF", "NotUnicode"],
      ["x".repeat(256), "SegmentTooLong"],
      // The length is the path's as given, not as tidied.
      ["./".repeat(2048) + "a", "TooLong"]
    ]
    for (const [path, reason] of refused) assert.strictEqual(verdict(RelativePath.validateLoose(path)), reason, JSON.stringify(path))
  })
})
