/**
 * What KuboContentStore sends and reads for directories, against a stand-in for Kubo's RPC API on loopback: the
 * multipart `add` (parts in depth-first order, URL-encoded paths as filenames, wrap-with-directory and the import
 * settings), and `files/stat` plus `ls` answered in Kubo's JSON shapes (core/commands/ls.go, files stat). The real
 * node runs the whole contract in KuboContentStore.test.ts when KUBO_API_URL is set.
 */
import { ContentStore } from "@cairn/content-store"
import { kuboVectors } from "@cairn/content-store/testing"
import { KuboContentStore } from "@cairn/content-store-kubo"
import { assert, describe, it } from "@effect/vitest"
import { Effect, type Scope, Stream } from "effect"
import { createServer, type IncomingMessage } from "node:http"

interface Received {
  readonly command: string
  readonly params: URLSearchParams
  readonly parts: ReadonlyArray<{ readonly filename: string; readonly type: string; readonly text: string }>
}

const root = "bafybeig73wgy5v3h3d5yjor6tgmjl7sshe3piakdfkpxghgjflkatofxse"
const docs = "bafybeihxogauttbg43smb5lpzmvhqbkpwcgi4ogohwwqtkmdb3w3asnfoa"
const notes = "bafybeid4hnmd65f3jv6pmdcesc7hpittpyztylf7mrka6nixecifjdccae"
const broken = "bafybeiczsscdsbs7ffqz55asqdf3smv6klcw3gofszvwlyarci47bgf354"
const hello = kuboVectors[2]!.cid
const readme = "bafkreicohzyvgyyc2ev4qz3mtssjzknlw36bo7kvo632c3rak24kmipaey"
const todo = "bafkreihfgcdihmn34m3fc6zsrek7bgfzacxupho3mf22fa5ogpssyt74dq"
const symlink = "QmbFMke1KXqnYyBBWxB74N4c5SBnJMVAiMNRcGu6x1AwQH"
/** A CID the stand-in does not hold. */
const unknown = kuboVectors[0]!.cid

const link = (Name: string, Hash: string, Type: number, Size = 0, Target = "") => ({ Name, Hash, Size, Type, Target })

/** The stand-in's directories, as `ipfs ls` gives their links (deliberately not in name order). */
const directories: Record<string, ReadonlyArray<ReturnType<typeof link>>> = {
  [root]: [link("hello.txt", hello, 2, 12), link("docs", docs, 1), link("latest", symlink, 4, 0, "hello.txt")],
  [docs]: [link("readme.md", readme, 2, 8), link("notes", notes, 1)],
  [notes]: [link("todo.txt", todo, 2, 14)],
  [broken]: [link("gone", unknown, 1)]
}

/** Kubo's answers, keyed by command and argument. */
const answer = (command: string, arg: string | null): { readonly status: number; readonly body: unknown } => {
  const notFound = { status: 500, body: { Message: `block was not found locally (offline): ipld: could not find ${arg}`, Code: 0, Type: "error" } }
  const cid = arg?.replace(/^\/ipfs\//, "") ?? ""
  // Paths under the root, as `files stat` answers them once Kubo has resolved them (boxo's resolver's messages).
  const paths: Record<string, { readonly status: number; readonly body: unknown }> = {
    [`/ipfs/${root}/docs`]: { status: 200, body: { Hash: docs, Size: 0, CumulativeSize: 900, Blocks: 2, Type: "directory" } },
    [`/ipfs/${root}/docs/readme.md`]: { status: 200, body: { Hash: readme, Size: 8, CumulativeSize: 8, Blocks: 0, Type: "file" } },
    [`/ipfs/${root}/latest`]: { status: 500, body: { Message: "unrecognized node type: Symlink", Code: 0, Type: "error" } },
    [`/ipfs/${root}/nope`]: { status: 500, body: { Message: `no link named "nope" under ${root}`, Code: 0, Type: "error" } },
    [`/ipfs/${root}/hello.txt/below`]: { status: 500, body: { Message: "no link by that name", Code: 0, Type: "error" } }
  }
  if (command === "files/stat" && arg !== null && paths[arg] !== undefined) return paths[arg]
  if (command === "dag/resolve" && arg === `/ipfs/${root}/latest`) return { status: 200, body: { Cid: { "/": symlink }, RemPath: "" } }
  if (command === "cat" && cid === hello) return { status: 200, body: "hello world\n" }
  if (command === "files/stat" && arg?.startsWith("/ipfs/")) {
    if (directories[cid] !== undefined) return { status: 200, body: { Hash: cid, Size: 0, CumulativeSize: 1000, Blocks: 2, Type: "directory" } }
    if (cid === hello) return { status: 200, body: { Hash: hello, Size: 12, CumulativeSize: 12, Blocks: 0, Type: "file" } }
    return notFound
  }
  if (command === "ls") {
    const links = directories[cid]
    return links === undefined ? notFound : { status: 200, body: { Objects: [{ Hash: cid, Links: links }] } }
  }
  return { status: 404, body: "404 page not found" }
}

const body = (request: IncomingMessage) =>
  new Promise<Buffer>((resolve, reject) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk)).on("end", () => resolve(Buffer.concat(chunks))).on("error", reject)
  })

/** Splits a multipart body by hand, so what is checked is the bytes sent, not a lenient parser's reading of them. */
const partsOf = (contentType: string, bytes: Buffer) => {
  const boundary = /boundary=(.+)$/.exec(contentType)![1]!
  const text = bytes.toString("latin1")
  assert.isTrue(text.endsWith(`--${boundary}--\r\n`), "the body closes with the final boundary")
  return text.split(`--${boundary}`).slice(1, -1).map((raw) => {
    const [head, ...rest] = raw.slice(2).split("\r\n\r\n")
    const filename = /filename="([^"]*)"/.exec(head!)![1]!
    return { filename, type: /Content-Type: (.+)/.exec(head!)![1]!, text: rest.join("\r\n\r\n").slice(0, -2) }
  })
}

interface StandIn {
  readonly url: string
  /** What it was sent, in order. */
  readonly received: Array<Received>
  readonly close: () => void
}

/** A stand-in Kubo on a loopback port, for the scope. */
const standIn = Effect.acquireRelease(
  Effect.callback<StandIn>((resume) => {
    const received: Array<Received> = []
    const server = createServer(async (request, response) => {
      const url = new URL(request.url!, "http://kubo")
      const command = url.pathname.replace("/api/v0/", "")
      const bytes = await body(request)
      const parts = command === "add" ? partsOf(request.headers["content-type"]!, bytes) : []
      received.push({ command, params: url.searchParams, parts })
      if (command === "add") {
        const lines = parts.map((part) => JSON.stringify({ Name: decodeURIComponent(part.filename), Hash: hello, Size: "20" }))
        response.writeHead(200, { "content-type": "application/json" })
        response.end([...lines, JSON.stringify({ Name: "", Hash: root, Size: "1049136" })].join("\n") + "\n")
        return
      }
      if (command === "cat" && url.searchParams.get("arg") === hello) {
        // Kubo's cat: from `offset`, at most `length` bytes.
        const offset = Number(url.searchParams.get("offset") ?? 0)
        const length = url.searchParams.has("length") ? Number(url.searchParams.get("length")) : Infinity
        response.writeHead(200, { "content-type": "text/plain" }).end("hello world\n".slice(offset, offset + length))
        return
      }
      const { status, body: reply } = answer(command, url.searchParams.get("arg"))
      response.writeHead(status, { "content-type": typeof reply === "string" ? "text/plain" : "application/json" })
      response.end(typeof reply === "string" ? reply : JSON.stringify(reply))
    }).listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      resume(Effect.succeed({ url: `http://127.0.0.1:${port}`, received, close: () => server.close() }))
    })
  }),
  (kubo) => Effect.sync(kubo.close)
)

const withStore = <A, E>(
  f: (store: ContentStore["Service"], kubo: StandIn) => Effect.Effect<A, E>
): Effect.Effect<A, E, Scope.Scope> =>
  Effect.gen(function*() {
    const kubo = yield* standIn
    return yield* ContentStore.use((store) => f(store, kubo)).pipe(
      Effect.provide(KuboContentStore.layer({ publicApiUrl: kubo.url, privateApiUrl: kubo.url }))
    )
  })

const text = (value: string) => new TextEncoder().encode(value)

describe("KuboContentStore directories, against a stand-in for Kubo's RPC API", () => {
  it.effect("adds a tree as one multipart add: depth-first parts named by their encoded paths, wrapped, Kubo's settings", () =>
    withStore((store, kubo) =>
      Effect.gen(function*() {
        const added = yield* store.addDirectory([
          { path: "z.txt", content: text("last") },
          { path: "docs/notes/todo.txt", content: text("walk the tree\n") },
          { path: "a b+c/ü?.txt", content: text("odd name") },
          { path: "docs/readme.md", content: text("# Cairn\n") },
          { path: "docs/big.bin", content: text("big") }
        ], { network: "public", cidVersion: 0 })
        assert.deepStrictEqual(added, { cid: root, size: 4 + 14 + 8 + 8 + 3 })
        const [add] = kubo.received
        assert.strictEqual(add!.command, "add")
        assert.deepInclude(Object.fromEntries(add!.params), {
          "wrap-with-directory": "true",
          "cid-version": "0",
          "raw-leaves": "false",
          chunker: "size-1048576",
          pin: "true"
        })
        assert.deepStrictEqual(add!.parts.map((part) => [decodeURIComponent(part.filename), part.text]), [
          ["a b+c/ü?.txt", "odd name"],
          ["docs/big.bin", "big"],
          ["docs/notes/todo.txt", "walk the tree\n"],
          ["docs/readme.md", "# Cairn\n"],
          ["z.txt", "last"]
        ])
        // Kubo unescapes filenames with Go's QueryUnescape, which reads "+" as a space: it must go out encoded.
        assert.strictEqual(add!.parts[0]!.filename, "a%20b%2Bc%2F%C3%BC%3F.txt")
        assert.isTrue(add!.parts.every((part) => part.type === "application/octet-stream"))
      })))

  it.effect("adds no files as one empty directory part, unwrapped", () =>
    withStore((store, kubo) =>
      Effect.gen(function*() {
        yield* store.addDirectory([], { network: "private" })
        const [add] = kubo.received
        assert.strictEqual(add!.params.get("wrap-with-directory"), "false")
        assert.deepStrictEqual(add!.parts.map((part) => part.type), ["application/x-directory"])
      })))

  it.effect("refuses a bad path before sending anything", () =>
    withStore((store, kubo) =>
      Effect.gen(function*() {
        const refused = yield* Effect.flip(store.addDirectory([{ path: "../up", content: text("x") }], { network: "public" }))
        assert.deepInclude(refused, { _tag: "InvalidDirectoryPath", path: "../up" })
        assert.strictEqual(kubo.received.length, 0)
      })))

  it.effect("walks with files/stat and ls, offline: depth first, siblings by name, kinds from Kubo's Type, symlinks not followed", () =>
    withStore((store, kubo) =>
      Effect.gen(function*() {
        const entries = yield* store.walk(root, "public")
        assert.deepStrictEqual(entries, [
          { path: "docs", cid: docs, kind: "directory", size: 0 },
          { path: "docs/notes", cid: notes, kind: "directory", size: 0 },
          { path: "docs/notes/todo.txt", cid: todo, kind: "file", size: 14 },
          { path: "docs/readme.md", cid: readme, kind: "file", size: 8 },
          { path: "hello.txt", cid: hello, kind: "file", size: 12 },
          { path: "latest", cid: symlink, kind: "symlink", size: 0 }
        ])
        const calls = kubo.received.map((call) => [call.command, call.params.get("arg"), call.params.get("offline")])
        assert.deepStrictEqual(calls, [
          ["files/stat", `/ipfs/${root}`, "true"],
          ["ls", root, "true"],
          ["ls", docs, "true"],
          ["ls", notes, "true"]
        ])
        assert.isTrue(kubo.received.slice(1).every((call) => call.params.get("resolve-type") === "true"))
      })))

  it.effect("fails a walk with ContentNotFound for the whole directory when a block below it is missing", () =>
    withStore((store) =>
      Effect.gen(function*() {
        assert.deepInclude(yield* Effect.flip(store.walk(broken, "public")), { _tag: "ContentNotFound", cid: broken, network: "public" })
      })))

  it.effect("refuses to walk a file (NotADirectory) and finds no unknown or malformed CID (ContentNotFound)", () =>
    withStore((store) =>
      Effect.gen(function*() {
        assert.deepInclude(yield* Effect.flip(store.walk(hello, "public")), { _tag: "NotADirectory", cid: hello })
        for (const cid of [unknown, "not-a-cid"]) {
          assert.deepInclude(yield* Effect.flip(store.walk(cid, "private")), { _tag: "ContentNotFound", cid, network: "private" })
        }
      })))

  it.effect("resolves a path with files/stat of /ipfs/<cid>/<path>, offline, and tells a missing name from a missing CID", () =>
    withStore((store, kubo) =>
      Effect.gen(function*() {
        assert.deepStrictEqual(yield* store.resolve(root, ["docs", "readme.md"], "public"), { cid: readme, kind: "file", size: 8 })
        assert.deepStrictEqual(yield* store.resolve(root, ["docs"], "public"), { cid: docs, kind: "directory", size: 0 })
        assert.deepStrictEqual(yield* store.resolve(root, [], "public"), { cid: root, kind: "directory", size: 0 })
        assert.deepStrictEqual(yield* store.resolve(hello, [], "public"), { cid: hello, kind: "file", size: 12 })
        // `files stat` cannot describe a symlink: the CID comes from dag/resolve.
        assert.deepStrictEqual(yield* store.resolve(root, ["latest"], "public"), { cid: symlink, kind: "symlink", size: 0 })
        for (const path of [["nope"], ["hello.txt", "below"]]) {
          assert.deepInclude(yield* Effect.flip(store.resolve(root, path, "public")), { _tag: "PathNotFound", cid: root, path: path.join("/") })
        }
        assert.deepInclude(yield* Effect.flip(store.resolve(unknown, ["x"], "private")), { _tag: "ContentNotFound", cid: unknown, network: "private" })
        assert.deepInclude(yield* Effect.flip(store.resolve("not-a-cid", [], "public")), { _tag: "ContentNotFound", cid: "not-a-cid" })
        const stats = kubo.received.filter((call) => call.command === "files/stat")
        assert.deepStrictEqual(stats.slice(0, 2).map((call) => [call.params.get("arg"), call.params.get("offline")]), [
          [`/ipfs/${root}/docs/readme.md`, "true"],
          [`/ipfs/${root}/docs`, "true"]
        ])
      })))

  it.effect("lists one directory with files/stat and one ls, in name order; a file is NotADirectory", () =>
    withStore((store, kubo) =>
      Effect.gen(function*() {
        assert.deepStrictEqual(yield* store.list(root, "public"), [
          { name: "docs", cid: docs, kind: "directory", size: 0 },
          { name: "hello.txt", cid: hello, kind: "file", size: 12 },
          { name: "latest", cid: symlink, kind: "symlink", size: 0 }
        ])
        assert.deepStrictEqual(kubo.received.map((call) => call.command), ["files/stat", "ls"])
        assert.deepInclude(yield* Effect.flip(store.list(hello, "public")), { _tag: "NotADirectory", cid: hello })
      })))

  it.effect("reads a range with cat's offset and length, which Kubo serves by seeking with the blocksizes", () =>
    withStore((store, kubo) =>
      Effect.gen(function*() {
        const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes)
        assert.strictEqual(decode(yield* Stream.mkUint8Array(store.cat(hello, "public", { offset: 6, length: 5 }))), "world")
        assert.strictEqual(decode(yield* Stream.mkUint8Array(store.cat(hello, "public", { offset: 6 }))), "world\n")
        assert.strictEqual(decode(yield* Stream.mkUint8Array(store.cat(hello, "public"))), "hello world\n")
        assert.deepStrictEqual(kubo.received.map((call) => [call.params.get("offset"), call.params.get("length")]), [
          ["6", "5"],
          ["6", null],
          [null, null]
        ])
      })))
})
