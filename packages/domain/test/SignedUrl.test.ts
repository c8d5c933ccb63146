import { SignedUrl } from "@cairn/domain"
import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"

const now = 1_700_000_000

/** What the rule says of a date and expiry: the expiry, or the refusal's detail. */
const expiry = (date: number, expires: number) => {
  const result = SignedUrl.expiryOf({ date, expires, nowSeconds: now })
  return Result.isSuccess(result) ? result.success : result.failure.detail
}

describe("a signed URL's validity", () => {
  it("runs from its date for expires seconds", () => {
    assert.strictEqual(expiry(now, 30), now + 30)
    assert.strictEqual(expiry(now - 10, 30), now + 20)
    assert.strictEqual(expiry(now, SignedUrl.maxExpiresSeconds), now + SignedUrl.maxExpiresSeconds)
  })

  it("refuses an expiry out of 1 second to a year, or not whole", () => {
    for (const expires of [0, -1, 1.5, SignedUrl.maxExpiresSeconds + 1]) assert.match(String(expiry(now, expires)), /^expires must be/)
  })

  it("refuses a date that is not a Unix time in seconds, or further ahead than clock skew", () => {
    assert.match(String(expiry(now * 1000, 30)), /date is in the future/)
    assert.match(String(expiry(-5, 30)), /date must be/)
    assert.match(String(expiry(now + 0.5, 30)), /date must be/)
    assert.strictEqual(expiry(now + SignedUrl.maxClockSkewSeconds, 30), now + SignedUrl.maxClockSkewSeconds + 30)
  })

  it("refuses a URL that would be born expired", () => {
    assert.match(String(expiry(now - 30, 30)), /already past/)
  })
})

describe("the mime types an upload's terms allow", () => {
  const allows = (allowMimeTypes: ReadonlyArray<string> | undefined, mimeType: string) =>
    SignedUrl.allows(allowMimeTypes === undefined ? {} : { allowMimeTypes }, mimeType)

  it("allows everything, folders included, when the terms list none", () => {
    assert.isTrue(allows(undefined, "application/x-anything"))
    assert.isTrue(allows(undefined, "directory"))
  })

  it("matches exact types and type/* without parameters or case", () => {
    assert.isTrue(allows(["text/plain"], "text/plain; charset=utf-8"))
    assert.isTrue(allows(["Image/*"], "image/PNG"))
    assert.isFalse(allows(["image/*"], "text/plain"))
    assert.isFalse(allows(["image/png"], "image/pngx"))
    assert.isFalse(allows(["text/*"], "textual/plain"))
  })

  it("allows a folder only by name: no wildcard covers directory", () => {
    assert.isTrue(allows(["directory"], "directory"))
    assert.isFalse(allows(["*/*"], "directory"))
    assert.isTrue(allows(["*/*"], "video/mp4"))
  })
})
