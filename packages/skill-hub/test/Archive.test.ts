import { Archive } from "@cairn/skill-hub"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { strToU8 } from "fflate"
import {
  byPath,
  deflatedZeros,
  MiB,
  skillMd,
  tar,
  tarGz,
  tarGzBomb,
  withMode,
  zip,
  zipOfDeflated,
  zipWithDuplicate
} from "./Fixtures.ts"

const refusal = (bytes: Uint8Array, limits?: Partial<Archive.Limits>) =>
  Effect.map(Effect.flip(Archive.read(bytes, limits)), (error) => ({ tag: error._tag, message: error.message }))

const refused = (message: string) => ({ tag: "ValidationFailed", message: `Validation failed: ${message}` })

describe("Archive.detect", () => {
  it("tells the format by its magic bytes", () => {
    assert.strictEqual(Archive.detect(zip({ "SKILL.md": strToU8("x") })), "zip")
    assert.strictEqual(Archive.detect(new Uint8Array([0x1f, 0x8b, 8, 0])), "tar.gz")
    assert.strictEqual(Archive.detect(strToU8("PK\x05\x06" + "\0".repeat(18))), "zip")
    assert.strictEqual(Archive.detect(strToU8("{\"not\":\"an archive\"}")), undefined)
    assert.strictEqual(Archive.detect(new Uint8Array(0)), undefined)
  })

  it.effect("knows a plain tar by its ustar magic", () =>
    Effect.gen(function*() {
      assert.strictEqual(Archive.detect(yield* tar([{ header: { name: "SKILL.md", size: 1 }, body: "x" }])), "tar")
    }))
})

describe("Archive.read", () => {
  describe("a good bundle", () => {
    it.effect("a zip unpacks to its files, folders implied", () =>
      Effect.gen(function*() {
        const files = yield* Archive.read(zip({
          "SKILL.md": strToU8(skillMd("hello", "Says hello")),
          scripts: { "run.sh": strToU8("echo hi\n") },
          empty: {}
        }))
        assert.deepStrictEqual(byPath(files), {
          "SKILL.md": skillMd("hello", "Says hello"),
          "scripts/run.sh": "echo hi\n"
        })
      }))

    it.effect("a tar.gz unpacks to its files, `./` prefixes dropped", () =>
      Effect.gen(function*() {
        const files = yield* Archive.read(yield* tarGz([
          { header: { name: "./", type: "directory", size: 0 } },
          { header: { name: "./SKILL.md", size: 5 }, body: "hello" },
          { header: { name: "./docs/", type: "directory", size: 0 } },
          { header: { name: "./docs/guide.md", size: 5 }, body: "guide" }
        ]))
        assert.deepStrictEqual(byPath(files), { "SKILL.md": "hello", "docs/guide.md": "guide" })
      }))

    it.effect("a plain tar is read too", () =>
      Effect.gen(function*() {
        const files = yield* Archive.read(yield* tar([{ header: { name: "SKILL.md", size: 2 }, body: "hi" }]))
        assert.deepStrictEqual(byPath(files), { "SKILL.md": "hi" })
      }))

    it.effect("a single top folder without a SKILL.md beside it is stripped", () =>
      Effect.gen(function*() {
        const files = yield* Archive.read(zip({
          "my-skill": { "SKILL.md": strToU8("x"), scripts: { "a.sh": strToU8("a") } }
        }))
        assert.deepStrictEqual(byPath(files), { "SKILL.md": "x", "scripts/a.sh": "a" })
      }))

    it.effect("a folder compressed in macOS Finder: its __MACOSX resource forks are dropped, then its folder stripped", () =>
      Effect.gen(function*() {
        const files = yield* Archive.read(zip({
          "my-skill": { "SKILL.md": strToU8("x") },
          __MACOSX: { "my-skill": { "._SKILL.md": strToU8("apple double") } }
        }))
        assert.deepStrictEqual(byPath(files), { "SKILL.md": "x" })
      }))

    it.effect("a top folder beside a root SKILL.md is kept", () =>
      Effect.gen(function*() {
        const files = yield* Archive.read(zip({ "SKILL.md": strToU8("x"), docs: { "a.md": strToU8("a") } }))
        assert.deepStrictEqual(byPath(files), { "SKILL.md": "x", "docs/a.md": "a" })
      }))
  })

  describe("refuses, with 400 and the reason", () => {
    it.effect("a path that climbs out of the folder, in a zip and in a tar", () =>
      Effect.gen(function*() {
        assert.deepStrictEqual(
          yield* refusal(zip({ "SKILL.md": strToU8("x"), "../x": strToU8("evil") })),
          refused(`the bundle's "../x" leaves the bundle's folder (..)`)
        )
        assert.deepStrictEqual(
          yield* refusal(yield* tarGz([{ header: { name: "a/../../x", size: 1 }, body: "e" }])),
          refused(`the bundle's "a/../../x" leaves the bundle's folder (..)`)
        )
      }))

    it.effect("an absolute path", () =>
      Effect.gen(function*() {
        assert.deepStrictEqual(
          yield* refusal(zip({ "/etc/x": strToU8("evil") })),
          refused(`the bundle's "/etc/x" is an absolute path`)
        )
        assert.deepStrictEqual(
          yield* refusal(yield* tarGz([{ header: { name: "/etc/x", size: 1 }, body: "e" }])),
          refused(`the bundle's "/etc/x" is an absolute path`)
        )
        assert.deepStrictEqual(
          yield* refusal(zip({ "C:/x": strToU8("evil") })),
          refused(`the bundle's "C:/x" is an absolute path`)
        )
        assert.deepStrictEqual(
          yield* refusal(yield* tarGz([{ header: { name: "./c:x", size: 1 }, body: "e" }])),
          refused(`the bundle's "./c:x" is an absolute path`)
        )
      }))

    it.effect("a backslash, a control character or an empty segment in a path", () =>
      Effect.gen(function*() {
        assert.deepStrictEqual(
          yield* refusal(zip({ "a\\b.md": strToU8("x") })),
          refused(`the bundle's "a\\\\b.md" has a backslash in its path`)
        )
        assert.deepStrictEqual(
          yield* refusal(zip({ "a\u0000b.md": strToU8("x") })),
          refused(`the bundle's "a\\u0000b.md" has a control character in its path`)
        )
        assert.deepStrictEqual(
          yield* refusal(zip({ "a//b.md": strToU8("x") })),
          refused(`the bundle's "a//b.md" has an empty or . segment`)
        )
        assert.deepStrictEqual(
          yield* refusal(zip({ "a\u007fb.md": strToU8("x") })),
          refused(`the bundle's "a\u007fb.md" has a control character in its path`)
        )
        const long = "x".repeat(256)
        assert.deepStrictEqual(
          yield* refusal(zip({ [`docs/${long}`]: strToU8("x") })),
          refused(`the bundle's "docs/${long}" has a name longer than 255 bytes in its path`)
        )
      }))

    it.effect("the same path twice", () =>
      Effect.gen(function*() {
        assert.deepStrictEqual(yield* refusal(zipWithDuplicate("SKILL.md")), refused(`the bundle has "SKILL.md" twice`))
      }))

    it.effect("a path that is both a file and a folder", () =>
      Effect.gen(function*() {
        assert.deepStrictEqual(
          yield* refusal(yield* tarGz([
            { header: { name: "docs", size: 1 }, body: "x" },
            { header: { name: "docs/a.md", size: 1 }, body: "a" }
          ])),
          refused(`the bundle's "docs" is both a file and a folder`)
        )
      }))

    it.effect("a symbolic link, in a zip (Unix mode) and in a tar", () =>
      Effect.gen(function*() {
        assert.deepStrictEqual(
          yield* refusal(zip({ "SKILL.md": strToU8("x"), link: withMode("/etc/passwd", 0o120777) })),
          refused(`the bundle's "link" is a symbolic link`)
        )
        assert.deepStrictEqual(
          yield* refusal(yield* tarGz([
            { header: { name: "SKILL.md", size: 1 }, body: "x" },
            { header: { name: "link", type: "symlink", linkname: "/etc/passwd", size: 0 } }
          ])),
          refused(`the bundle's "link" is a symbolic link`)
        )
      }))

    it.effect("a hard link in a tar", () =>
      Effect.gen(function*() {
        assert.deepStrictEqual(
          yield* refusal(yield* tarGz([
            { header: { name: "SKILL.md", size: 1 }, body: "x" },
            { header: { name: "copy", type: "link", linkname: "/etc/shadow", size: 0 } }
          ])),
          refused(`the bundle's "copy" is a hard link`)
        )
      }))

    it.effect("a device or fifo", () =>
      Effect.gen(function*() {
        assert.deepStrictEqual(
          yield* refusal(yield* tarGz([{ header: { name: "pipe", type: "fifo", size: 0 } }])),
          refused(`the bundle's "pipe" is a device, fifo or socket`)
        )
        assert.deepStrictEqual(
          yield* refusal(yield* tarGz([{ header: { name: "null", type: "character-device", size: 0 } }])),
          refused(`the bundle's "null" is a device, fifo or socket`)
        )
        assert.deepStrictEqual(
          yield* refusal(zip({ pipe: withMode("", 0o010644) })),
          refused(`the bundle's "pipe" is a device, fifo or socket`)
        )
      }))

    it.effect("more files than the limit", () =>
      Effect.gen(function*() {
        const many = Object.fromEntries(Array.from({ length: 501 }, (_, index) => [`f${index}.md`, strToU8("x")]))
        assert.deepStrictEqual(yield* refusal(zip(many)), refused("the bundle has more than 500 files"))
        assert.deepStrictEqual(yield* refusal(zip(many), { maxFiles: 10 }), refused("the bundle has more than 10 files"))
      }))

    it.effect("an archive over the size limit, before reading it", () =>
      Effect.gen(function*() {
        assert.deepStrictEqual(
          yield* refusal(zip({ "SKILL.md": strToU8("x".repeat(1000)) }), { maxArchiveBytes: 100 }),
          refused("the archive is larger than 100 bytes")
        )
      }))

    it.effect("a zip bomb, stopped while inflating: 100 MiB declared and actual, in a few hundred KiB", () =>
      Effect.gen(function*() {
        const bomb = zipOfDeflated("bomb.bin", deflatedZeros(100), 100 * MiB)
        assert.isBelow(bomb.length, 200 * 1024)
        const started = Date.now()
        assert.deepStrictEqual(yield* refusal(bomb), refused("the bundle unpacks to more than 20 MiB"))
        assert.isBelow(Date.now() - started, 5_000)
      }))

    it.effect("a zip bomb that declares a small size: what comes out is counted, not what the header says", () =>
      Effect.gen(function*() {
        assert.deepStrictEqual(
          yield* refusal(zipOfDeflated("small.txt", deflatedZeros(100), 10)),
          refused("the bundle unpacks to more than 20 MiB")
        )
      }))

    it.effect("a tar.gz bomb, stopped while gunzipping", () =>
      Effect.gen(function*() {
        const bomb = tarGzBomb(100)
        assert.isBelow(bomb.length, 200 * 1024)
        assert.deepStrictEqual(yield* refusal(bomb), refused("the bundle unpacks to more than 20 MiB"))
      }))

    it.effect("files that together pass the unpacked limit", () =>
      Effect.gen(function*() {
        const files = { "a.bin": new Uint8Array(600), "b.bin": new Uint8Array(600) }
        assert.deepStrictEqual(
          yield* refusal(zip(files), { maxUnpackedBytes: 1000 }),
          refused("the bundle unpacks to more than 1000 bytes")
        )
        assert.deepStrictEqual(
          yield* refusal(yield* tarGz([
            { header: { name: "a.bin", size: 600 }, body: new Uint8Array(600) },
            { header: { name: "b.bin", size: 600 }, body: new Uint8Array(600) }
          ]), { maxUnpackedBytes: 1000 }),
          refused("the bundle unpacks to more than 1000 bytes")
        )
      }))

    it.effect("bytes that are no archive, and an archive that is damaged", () =>
      Effect.gen(function*() {
        assert.deepStrictEqual(yield* refusal(strToU8("hello")), refused("the archive is not a zip or a gzipped tar"))
        const good = zip({ "SKILL.md": strToU8("x".repeat(100)) })
        const result = yield* refusal(good.subarray(0, good.length - 30))
        assert.strictEqual(result.tag, "ValidationFailed")
        assert.include(result.message, "the archive is corrupt")
      }))
  })
})

describe("Archive.writeZip", () => {
  const files = [
    { path: "SKILL.md", content: strToU8(skillMd("hello", "Says hello")) },
    { path: "scripts/run.sh", content: strToU8("echo hi\n") }
  ]

  it("writes the same bytes for the same files in any order", () => {
    assert.deepStrictEqual(Archive.writeZip(files), Archive.writeZip([...files].reverse()))
  })

  it.effect("reads back to the same files", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(byPath(yield* Archive.read(Archive.writeZip(files))), byPath(files))
    }))
})
