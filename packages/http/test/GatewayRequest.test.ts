/**
 * The gateway's reading of a request (GatewayRequest.ts), rule by rule: the path as sent (dot segments and encoded
 * slashes refused however they are spelled), one byte range per RFC 9110 (and what is ignored), If-None-Match, and
 * the Content-Disposition that `?filename=` and `?download=true` ask for.
 */
import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import * as GatewayRequest from "../src/GatewayRequest.ts"

const cid = "bafybeidypg463tna5fsbtocz3uvifa6kuhhnmo5i53kp4t2ubxuojc5kji"

const refusal = (target: string) => {
  const parsed = GatewayRequest.parsePath(target)
  return Result.isFailure(parsed) ? parsed.failure.message : undefined
}

describe("parsePath", () => {
  it("reads the CID, the decoded names under it and whether the path ends with a slash", () => {
    assert.deepStrictEqual(GatewayRequest.parsePath(`/ipfs/${cid}`), Result.succeed({ cid, segments: [], trailingSlash: false, raw: `/ipfs/${cid}` }))
    assert.deepStrictEqual(GatewayRequest.parsePath(`/ipfs/${cid}/`), Result.succeed({ cid, segments: [], trailingSlash: true, raw: `/ipfs/${cid}/` }))
    assert.deepStrictEqual(
      GatewayRequest.parsePath(`/ipfs/${cid}/a%20b//c%3F.txt?filename=x#y`),
      Result.succeed({ cid, segments: ["a b", "c?.txt"], trailingSlash: false, raw: `/ipfs/${cid}/a%20b//c%3F.txt` })
    )
    assert.deepStrictEqual(
      GatewayRequest.parsePath(`http://cairn.example/ipfs/${cid}/docs/`),
      Result.succeed({ cid, segments: ["docs"], trailingSlash: true, raw: `/ipfs/${cid}/docs/` })
    )
    // Names that merely contain dots are names.
    assert.deepStrictEqual(Result.map(GatewayRequest.parsePath(`/ipfs/${cid}/..a/.b/...`), (path) => path.segments), Result.succeed(["..a", ".b", "..."]))
  })

  it("refuses a dot segment in any spelling, an encoded slash, and bad percent-encoding", () => {
    for (const segment of ["..", ".", "%2e%2e", "%2E%2E", ".%2e", "%2e", "%2E"]) {
      assert.strictEqual(refusal(`/ipfs/${cid}/a/${segment}/b`), `Validation failed: the path has a "${segment}" segment: a path cannot climb out of its CID`)
    }
    assert.strictEqual(refusal(`/ipfs/${cid}/a%2Fb`), `Validation failed: the path segment "a%2Fb" holds an encoded slash: a segment is one name`)
    assert.strictEqual(refusal(`/ipfs/${cid}/%2f..%2fetc`), `Validation failed: the path segment "%2f..%2fetc" holds an encoded slash: a segment is one name`)
    assert.strictEqual(refusal(`/ipfs/${cid}/%zz`), `Validation failed: the path segment "%zz" is not valid percent-encoding`)
    assert.strictEqual(refusal(`/ipfs/%zz/x`), `Validation failed: the path segment "%zz" is not valid percent-encoding`)
  })
})

describe("parseRange", () => {
  const etag = `"${cid}"`
  const range = (header: string | undefined, size = 100, ifRange?: string) => GatewayRequest.parseRange(header, ifRange, etag, size)

  it("takes one range, an open end and a suffix, cut at the last byte", () => {
    assert.deepStrictEqual(range("bytes=0-9"), { _tag: "Part", start: 0, end: 9 })
    assert.deepStrictEqual(range("bytes=90-200"), { _tag: "Part", start: 90, end: 99 })
    assert.deepStrictEqual(range("bytes=10-"), { _tag: "Part", start: 10, end: 99 })
    assert.deepStrictEqual(range("bytes=-10"), { _tag: "Part", start: 90, end: 99 })
    assert.deepStrictEqual(range("bytes=-1000"), { _tag: "Part", start: 0, end: 99 })
    assert.deepStrictEqual(range("BYTES=5-5"), { _tag: "Part", start: 5, end: 5 })
  })

  it("is unsatisfiable past the end, for an empty suffix, and for any range of an empty file", () => {
    assert.deepStrictEqual(range("bytes=100-"), { _tag: "Unsatisfiable" })
    assert.deepStrictEqual(range("bytes=100-200"), { _tag: "Unsatisfiable" })
    assert.deepStrictEqual(range("bytes=-0"), { _tag: "Unsatisfiable" })
    assert.deepStrictEqual(range("bytes=0-", 0), { _tag: "Unsatisfiable" })
    assert.deepStrictEqual(range("bytes=-5", 0), { _tag: "Unsatisfiable" })
  })

  it("ignores what it does not serve: no header, several ranges, other units, nonsense, a backwards range", () => {
    for (const header of [undefined, "bytes=0-1,5-6", "items=0-1", "bytes=-", "bytes=a-b", "bytes=9-3", "bytes 0-1"]) {
      assert.deepStrictEqual(range(header), { _tag: "Whole" }, String(header))
    }
  })

  it("honours If-Range only when it names the current ETag", () => {
    assert.deepStrictEqual(range("bytes=0-9", 100, etag), { _tag: "Part", start: 0, end: 9 })
    assert.deepStrictEqual(range("bytes=0-9", 100, "\"other\""), { _tag: "Whole" })
    assert.deepStrictEqual(range("bytes=0-9", 100, "Wed, 21 Oct 2015 07:28:00 GMT"), { _tag: "Whole" })
  })
})

describe("notModified", () => {
  it("matches the ETag, weakly, in a list, or *", () => {
    const etag = `"${cid}"`
    for (const header of [etag, `W/${etag}`, `"a", ${etag}`, "*"]) assert.isTrue(GatewayRequest.notModified(header, etag), header)
    for (const header of [undefined, "\"a\"", cid]) assert.isFalse(GatewayRequest.notModified(header, etag), String(header))
  })
})

describe("contentDisposition", () => {
  it("is inline with ?filename=, an attachment with ?download=true, and absent otherwise", () => {
    assert.strictEqual(GatewayRequest.contentDisposition("a.pdf", null, cid), `inline; filename="a.pdf"; filename*=UTF-8''a.pdf`)
    assert.strictEqual(GatewayRequest.contentDisposition("a.pdf", "true", cid), `attachment; filename="a.pdf"; filename*=UTF-8''a.pdf`)
    assert.strictEqual(GatewayRequest.contentDisposition(null, "true", "x.css"), `attachment; filename="x.css"; filename*=UTF-8''x.css`)
    assert.isUndefined(GatewayRequest.contentDisposition(null, null, cid))
    assert.isUndefined(GatewayRequest.contentDisposition(null, "false", cid))
    assert.isUndefined(GatewayRequest.contentDisposition("", null, cid))
  })

  it("cannot be broken by a name: quotes, backslashes, line breaks and non-ASCII go out as _ and in filename*", () => {
    assert.strictEqual(
      GatewayRequest.contentDisposition("é\"\\\r\n;'(x).txt", null, cid),
      `inline; filename="_____;'(x).txt"; filename*=UTF-8''%C3%A9%22%5C%0D%0A%3B%27%28x%29.txt`
    )
  })
})
