import { AuditStreams, Upload } from "@cairn/domain"
import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import { given } from "../DeciderSpec.ts"

const detail = (result: Result.Result<unknown, { readonly message: string }>) => Result.isFailure(result) ? result.failure.message : "accepted"

describe("the uploads log", () => {
  it("records each upload with its size and hash", () => {
    const fields = {
      agentId: "a1", workspaceId: "w", filename: "a.txt", path: "uploads/a.txt", size: 2, sha256: "ab", at: "2026-11-22T10:00:00.000Z"
    }
    const uploaded = new Upload.WorkspaceFileUploaded(fields)
    given(Upload.decider, [uploaded]).when(new Upload.RecordUpload(fields)).then([uploaded])
    assert.include(AuditStreams.auditStreams("a1"), Upload.stream("a1"))
  })
})

describe("an upload's filename", () => {
  it("is one plain name", () => {
    for (const name of ["report.pdf", ".env", "with space.txt", "données.csv", "a".repeat(255), "x".repeat(84) + "é".repeat(85)]) {
      assert.deepStrictEqual(Upload.validateFilename(name), Result.succeed(name))
    }
    assert.strictEqual(Upload.uploadPath("report.pdf"), "uploads/report.pdf")
  })

  it("is required", () => {
    for (const name of [undefined, null, ""]) assert.strictEqual(detail(Upload.validateFilename(name)), "Validation failed: filename is required")
    assert.strictEqual(detail(Upload.validateFilename(3)), "Validation failed: filename must be a string")
  })

  it("cannot lead anywhere but uploads/", () => {
    const refused: Array<[string, string]> = [
      [".", "must not be . or .."],
      ["..", "must not be . or .."],
      ["a/b", "must not contain / or \\"],
      ["../x", "must not contain / or \\"],
      ["a\\b", "must not contain / or \\"],
      ["a..b", "must not contain .."],
      ["a\0b", "must not contain control characters"],
      ["a\nb", "must not contain control characters"],
      ["a\u007fb", "must not contain control characters"],
      ["a\u0085b", "must not contain control characters"],
      ["a\uD800b", "must be valid Unicode"],
      ["C:evil.txt", "must not start with a drive letter (C:)"],
      ["a".repeat(256), "must be at most 255 bytes"],
      ["é".repeat(128), "must be at most 255 bytes"]
    ]
    for (const [name, why] of refused) assert.strictEqual(detail(Upload.validateFilename(name)), `Validation failed: filename ${why}`, JSON.stringify(name))
  })
})

describe("an upload's contentBase64", () => {
  const decoded = (text: unknown) => Result.map(Upload.decodeBase64(text), (bytes) => Array.from(bytes))

  it("decodes strict base64, padded, to its bytes", () => {
    assert.deepStrictEqual(decoded(""), Result.succeed([]))
    assert.deepStrictEqual(decoded("AA=="), Result.succeed([0]))
    assert.deepStrictEqual(decoded("AAE="), Result.succeed([0, 1]))
    assert.deepStrictEqual(decoded("AAEC"), Result.succeed([0, 1, 2]))
    assert.deepStrictEqual(decoded("aGVsbG8="), Result.succeed(Array.from(new TextEncoder().encode("hello"))))
    assert.deepStrictEqual(decoded("+/+/"), Result.succeed([0xfb, 0xff, 0xbf]))
    const bytes = crypto.getRandomValues(new Uint8Array(1000))
    assert.deepStrictEqual(decoded(btoa(String.fromCharCode(...bytes))), Result.succeed(Array.from(bytes)))
  })

  it("is required, and a string", () => {
    assert.strictEqual(detail(Upload.decodeBase64(undefined)), "Validation failed: contentBase64 is required")
    assert.strictEqual(detail(Upload.decodeBase64(12)), "Validation failed: contentBase64 must be a string")
  })

  it("refuses every lenient form, saying which", () => {
    const refused: Array<[string, string]> = [
      ["data:text/plain;base64,aGVsbG8=", "must be plain base64, without a data: URL prefix"],
      ["aGVs bG8=", "must not contain whitespace or line breaks"],
      ["aGVsbG8=\n", "must not contain whitespace or line breaks"],
      ["aGVs\r\nbG8=", "must not contain whitespace or line breaks"],
      ["aGVsbG8", "must be padded with = to a multiple of 4 characters"],
      ["aGVsbG", "must be padded with = to a multiple of 4 characters"],
      ["aG=sbG8=", "has padding (=) before its end"],
      ["AA==AA==", "has padding (=) before its end"],
      ["A===", "has padding (=) before its end"],
      ["a-_b", "has a character outside the base64 alphabet at offset 1"],
      ["aGVsbG8*", "has a character outside the base64 alphabet at offset 7"],
      ["aGVsbé8=", "has a character outside the base64 alphabet at offset 5"],
      ["AB==", "has non-zero bits in its padding (not canonical base64)"],
      ["AAF=", "has non-zero bits in its padding (not canonical base64)"]
    ]
    for (const [text, why] of refused) assert.strictEqual(detail(Upload.decodeBase64(text)), `Validation failed: contentBase64 ${why}`, JSON.stringify(text))
  })
})

describe("a path to read", () => {
  it("is relative to the workspace, tidied", () => {
    assert.deepStrictEqual(Upload.validateReadPath("uploads/a.txt"), Result.succeed("uploads/a.txt"))
    assert.deepStrictEqual(Upload.validateReadPath("./notes//today.md"), Result.succeed("notes/today.md"))
    assert.deepStrictEqual(Upload.validateReadPath("a..b/c"), Result.succeed("a..b/c"))
  })

  it("never leaves it", () => {
    const refused: Array<[unknown, string]> = [
      [undefined, "path is required"],
      ["", "path is required"],
      ["/etc/passwd", "path must be relative to the workspace"],
      ["../secrets.key", "path must not contain .. (it stays inside the workspace)"],
      ["a/../../b", "path must not contain .. (it stays inside the workspace)"],
      ["a\\..\\b", "path must use / as separator, not \\"],
      ["a\0b", "path must not contain control characters"],
      ["a\u0085b", "path must not contain control characters"],
      ["C:/Windows/win.ini", "path must be relative to the workspace"],
      ["./C:x", "path must be relative to the workspace"],
      ["./", "path must name a file"],
      [".", "path must name a file"],
      ["x".repeat(256), "path must be at most 4096 bytes, each name at most 255"]
    ]
    for (const [path, why] of refused) assert.strictEqual(detail(Upload.validateReadPath(path)), `Validation failed: ${why}`, JSON.stringify(path))
  })
})
