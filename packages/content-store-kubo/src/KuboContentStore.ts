/**
 * The ContentStore port on Kubo's RPC API. One Kubo node has one blockstore, so each network is its own node:
 * public content goes to one that may run a gateway, private content to one with no gateway and no networking.
 * Reads pass `offline=true`, so a CID the node does not hold fails at once instead of being searched for; and
 * each read waits at most `readTimeout` (30 s) for the node's answer (a streamed one, `cat` or `dag/export`, for its
 * start), since a stuck node must not hold a gateway request open forever: past it, the read is ContentTimeout (504).
 * Directories go in as one multipart `add` with `wrap-with-directory` (each part's filename its path) and are
 * walked with `files/stat` (is the root a directory?) and `ls` per directory. A path under a CID is resolved by
 * Kubo itself (`files/stat` of `/ipfs/<cid>/<path>`, HAMT shards included), and a range of a file is `cat` with
 * `offset` and `length`, which Kubo serves by seeking through the DAG with its blocksizes.
 */
import {
  ContentNotFound,
  ContentStore,
  ContentStoreUnavailable,
  ContentTimeout,
  type DirectoryEntry,
  type DirectoryFile,
  directoryPathProblem,
  type DirectoryLink,
  type Network,
  NotADirectory,
  PathNotFound,
  type PathTarget
} from "@cairn/content-store"
import { Data, Duration, Effect, Layer, Option, Schema, Stream } from "effect"
import { FetchHttpClient, HttpClient, HttpClientRequest, type HttpClientResponse } from "effect/http"
import { CID } from "multiformats/cid"

export interface Options {
  /** The RPC API of the node behind the public gateway, such as `http://127.0.0.1:5001`. */
  readonly publicApiUrl: string
  /** The RPC API of the node that keeps private content: no gateway, no networking. */
  readonly privateApiUrl: string
  /** How long a read (`cat`, `block/get`, `dag/export`, `block/stat`, each call of a walk) may wait; 30 s by default. */
  readonly readTimeout?: Duration.Input
}

/** `ipfs add` with the settings every adapter imports with, whatever the node's own Import config says. */
const addParams = (cidVersion: 0 | 1) => ({
  "cid-version": String(cidVersion),
  "raw-leaves": String(cidVersion === 1),
  chunker: "size-1048576",
  "max-file-links": "1024",
  trickle: "false",
  hash: "sha2-256",
  pin: "true"
})

/** Kubo answered a command with an error. */
class KuboRefused extends Data.TaggedError("KuboRefused")<{ readonly status: number; readonly message: string }> {}

const ErrorBody = Schema.fromJsonString(Schema.Struct({ Message: Schema.String }))
const AddedLine = Schema.fromJsonString(Schema.Struct({ Hash: Schema.String }))
const Stat = Schema.fromJsonString(Schema.Struct({ Type: Schema.String }))
/** `ipfs files stat` as JSON: Type is "directory" (a HAMT shard too) or "file" (a raw block too); Size a file's bytes. */
const PathStat = Schema.fromJsonString(Schema.Struct({ Hash: Schema.String, Type: Schema.String, Size: Schema.Number }))
/** `ipfs dag resolve` as JSON: the CID a path ends at. */
const Resolved = Schema.fromJsonString(Schema.Struct({ Cid: Schema.Struct({ "/": Schema.String }) }))
/** `ipfs ls --resolve-type --size` as JSON. Type is UnixFS's: 1 directory (a HAMT shard too), 2 file, 4 symlink. */
const Listing = Schema.fromJsonString(Schema.Struct({
  Objects: Schema.Array(Schema.Struct({
    Links: Schema.NullOr(Schema.Array(Schema.Struct({ Name: Schema.String, Hash: Schema.String, Size: Schema.Number, Type: Schema.Number })))
  }))
}))
const unixfsType = { directory: 1, symlink: 4 } as const

// A name that is not there (boxo's resolver: `no link named "x" under <cid>`; a name under a file: merkledag's "no
// link by that name"), or a name under a raw block. Kubo answers each with a 500.
const meansNoSuchPath = (refusal: KuboRefused) =>
  refusal.status === 500 && /no link named|no link by that name|not a directory|cannot resolve through|has no links/i.test(refusal.message)
// `files stat` knows files and directories only: a symlink is "unrecognized node type: Symlink".
const meansSymlink = (refusal: KuboRefused) => refusal.status === 500 && /unrecognized node type: symlink/i.test(refusal.message)

// Kubo answers a missing block with a 500 such as "block was not found locally (offline): ipld: could not find …".
// The status matters: a wrong API URL gets a plain "404 page not found", which is a broken node, not absent content.
const meansNotFound = (refusal: KuboRefused) => refusal.status === 500 && /not found|could not find/i.test(refusal.message)

const refusal = (response: HttpClientResponse.HttpClientResponse) =>
  response.text.pipe(
    Effect.orElseSucceed(() => ""),
    Effect.flatMap((text) =>
      Effect.fail(new KuboRefused({
        status: response.status,
        message: Schema.decodeUnknownOption(ErrorBody)(text).pipe(Option.map((body) => body.Message), Option.getOrElse(() => text))
      }))
    )
  )

const multipartFile = (content: Stream.Stream<Uint8Array, unknown>, boundary: string) => {
  const encoder = new TextEncoder()
  const head = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="file"\r\n`
    + `Content-Type: application/octet-stream\r\n\r\n`
  return Stream.make(encoder.encode(head)).pipe(
    Stream.concat(content),
    Stream.concat(Stream.make(encoder.encode(`\r\n--${boundary}--\r\n`)))
  )
}

/** Names in UTF-8 byte order (code point order): how Kubo sorts a directory's links. */
const byName = (a: { readonly Name: string }, b: { readonly Name: string }) => {
  const x = Array.from(a.Name, (c) => c.codePointAt(0)!)
  const y = Array.from(b.Name, (c) => c.codePointAt(0)!)
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i]! - y[i]!
  return x.length - y.length
}

/** Paths in depth-first order, segment by segment, so every directory's files are contiguous. */
const bySegments = (a: DirectoryFile, b: DirectoryFile) => {
  const x = a.path.split("/")
  const y = b.path.split("/")
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    if (x[i] !== y[i]) return byName({ Name: x[i]! }, { Name: y[i]! })
  }
  return x.length - y.length
}

/**
 * A directory as Kubo's multipart reader takes it: one part per file, its filename the URL-encoded path (Kubo
 * unescapes it and makes the implied directories). Kubo reads the parts as one walk of the tree, so a directory's
 * files must come together: they go in depth-first order. No files is one empty directory part.
 */
const multipartDirectory = (files: ReadonlyArray<DirectoryFile>, boundary: string) => {
  const encoder = new TextEncoder()
  const part = (filename: string, contentType: string) =>
    encoder.encode(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${encodeURIComponent(filename)}"\r\n`
        + `Content-Type: ${contentType}\r\n\r\n`
    )
  const chunks: Array<Uint8Array> = files.length === 0 ? [part("empty", "application/x-directory"), encoder.encode("\r\n")] : []
  for (const file of [...files].sort(bySegments)) {
    chunks.push(part(file.path, "application/octet-stream"), file.content, encoder.encode("\r\n"))
  }
  chunks.push(encoder.encode(`--${boundary}--\r\n`))
  return Stream.fromIterable(chunks)
}

export const make = (options: Options) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    const apiUrls = { public: options.publicApiUrl.replace(/\/+$/, ""), private: options.privateApiUrl.replace(/\/+$/, "") }
    const readTimeout = Duration.fromInputUnsafe(options.readTimeout ?? "30 seconds")

    /** A read that must answer within `readTimeout`; the node is left to finish (or not) on its own. */
    const bounded = (operation: string, cid: string) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      Effect.timeoutOrElse(effect, {
        duration: readTimeout,
        orElse: () => Effect.fail(new ContentTimeout({ operation, cid, timeoutMillis: Duration.toMillis(readTimeout) }))
      })

    /** Posts one RPC command (Kubo takes only POST). Any answer but 2xx is a KuboRefused. */
    const post = (
      network: Network,
      command: string,
      params: Record<string, string>,
      withBody: (request: HttpClientRequest.HttpClientRequest) => HttpClientRequest.HttpClientRequest = (request) => request
    ) =>
      client.execute(
        HttpClientRequest.post(`${apiUrls[network]}/api/v0/${command}`).pipe(HttpClientRequest.setUrlParams(params), withBody)
      ).pipe(
        Effect.mapError((cause) => new ContentStoreUnavailable({ operation: command, cause })),
        Effect.flatMap((response) => response.status < 300 ? Effect.succeed(response) : refusal(response))
      )

    /**
     * Runs a read command on a CID (or an `/ipfs/<cid>` path naming `cid`), offline. A malformed CID, or a refusal
     * that says a block is missing, is ContentNotFound.
     */
    const read = (command: string, arg: string, network: Network, cid = arg, params: Record<string, string> = {}) =>
      Effect.try({ try: () => CID.parse(cid), catch: () => new ContentNotFound({ cid, network }) }).pipe(
        Effect.flatMap((root) =>
          post(network, command, { ...params, arg: arg === cid ? root.toString() : arg, offline: "true" }).pipe(bounded(command, cid))
        ),
        Effect.catchTag("KuboRefused", (refused) =>
          Effect.fail(
            meansNotFound(refused)
              ? new ContentNotFound({ cid, network })
              : new ContentStoreUnavailable({ operation: command, cause: refused })
          ))
      )

    const unavailable = (operation: string) => (cause: unknown) => new ContentStoreUnavailable({ operation, cause })

    const streamed = (command: string, cid: string, network: Network, params: Record<string, string> = {}) =>
      Stream.unwrap(read(command, cid, network, cid, params).pipe(
        Effect.map((response) => response.stream.pipe(Stream.mapError(unavailable(command))))
      ))

    const decoded = <A>(response: HttpClientResponse.HttpClientResponse, schema: Schema.Codec<A, string>, operation: string) =>
      response.text.pipe(Effect.flatMap(Schema.decodeUnknownEffect(schema)), Effect.mapError(unavailable(operation)))

    /** Whether `cid` is a directory (`files/stat`); ContentNotFound when the node lacks it. */
    const isDirectory = (cid: string, network: Network) =>
      read("files/stat", `/ipfs/${cid}`, network, cid).pipe(
        Effect.flatMap((response) => decoded(response, Stat, "files/stat")),
        Effect.map((stat) => stat.Type === "directory")
      )

    /** One directory's links, as `ls --resolve-type --size` gives them, in name order. */
    const links = (directory: string, network: Network) =>
      read("ls", directory, network, directory, { "resolve-type": "true", size: "true" }).pipe(
        Effect.flatMap((response) => decoded(response, Listing, "ls")),
        Effect.map((listing) =>
          [...(listing.Objects[0]?.Links ?? [])].sort(byName).map((link): DirectoryLink => ({
            name: link.Name,
            cid: link.Hash,
            kind: link.Type === unixfsType.directory ? "directory" : link.Type === unixfsType.symlink ? "symlink" : "file",
            size: link.Type === unixfsType.directory || link.Type === unixfsType.symlink ? 0 : link.Size
          }))
        )
      )

    /**
     * `files/stat` of `/ipfs/<cid>/<path>` (Kubo resolves the path, offline), with its refusals told apart: a name
     * that is not there is PathNotFound, a symlink (which `files stat` cannot describe) is found with `dag/resolve`.
     */
    const resolve = (cid: string, path: ReadonlyArray<string>, network: Network): Effect.Effect<PathTarget, ContentNotFound | ContentStoreUnavailable | ContentTimeout | PathNotFound> => {
      const ipfsPath = [`/ipfs/${cid}`, ...path].join("/")
      const refused = (refusal: KuboRefused) =>
        meansNotFound(refusal) ? new ContentNotFound({ cid, network })
        : meansNoSuchPath(refusal) ? new PathNotFound({ cid, path: path.join("/") })
        : new ContentStoreUnavailable({ operation: "files/stat", cause: refusal })
      const parsed = Effect.try({ try: () => CID.parse(cid), catch: () => new ContentNotFound({ cid, network }) })
      const stat = (command: string) => post(network, command, { arg: ipfsPath, offline: "true" }).pipe(bounded(command, cid))
      return parsed.pipe(
        Effect.flatMap(() => stat("files/stat")),
        Effect.flatMap((response) => decoded(response, PathStat, "files/stat")),
        Effect.map((stat): PathTarget =>
          stat.Type === "directory" ? { cid: stat.Hash, kind: "directory", size: 0 } : { cid: stat.Hash, kind: "file", size: stat.Size }
        ),
        Effect.catchTag("KuboRefused", (refusal) =>
          meansSymlink(refusal)
            ? stat("dag/resolve").pipe(
              Effect.flatMap((response) => decoded(response, Resolved, "dag/resolve")),
              Effect.map(({ Cid }): PathTarget => ({ cid: Cid["/"], kind: "symlink", size: 0 })),
              Effect.catchTag("KuboRefused", (again) => Effect.fail(refused(again)))
            )
            : Effect.fail(refused(refusal)))
      )
    }

    return ContentStore.of({
      add: (content, { network, cidVersion = 1 }) =>
        Effect.suspend(() => {
          let size = 0
          const counted = content.pipe(Stream.tap((chunk) => Effect.sync(() => (size += chunk.byteLength))))
          const boundary = `cairn-${crypto.randomUUID()}`
          return post(network, "add", addParams(cidVersion), HttpClientRequest.bodyStream(multipartFile(counted, boundary), {
            contentType: `multipart/form-data; boundary=${boundary}`
          })).pipe(
            Effect.flatMap((response) => response.text),
            // One JSON object per line; the file's comes last.
            Effect.flatMap((text) => Schema.decodeUnknownEffect(AddedLine)(text.trim().split("\n").at(-1))),
            Effect.map(({ Hash }) => ({ cid: Hash, size })),
            Effect.mapError((error) => error._tag === "ContentStoreUnavailable" ? error : unavailable("add")(error))
          )
        }),
      cat: (cid, network, range) =>
        streamed("cat", cid, network, range === undefined ? {} : {
          offset: String(range.offset),
          ...(range.length === undefined ? {} : { length: String(range.length) })
        }),
      resolve,
      list: (cid, network) =>
        isDirectory(cid, network).pipe(
          Effect.flatMap((directory): Effect.Effect<ReadonlyArray<DirectoryLink>, ContentNotFound | ContentStoreUnavailable | ContentTimeout | NotADirectory> =>
            directory ? links(cid, network) : Effect.fail(new NotADirectory({ cid }))
          )
        ),
      addDirectory: (files, { network, cidVersion = 1 }) => {
        const invalid = directoryPathProblem(files.map((file) => file.path))
        if (invalid !== undefined) return Effect.fail(invalid)
        const boundary = `cairn-${crypto.randomUUID()}`
        // An empty directory is added as itself; anything else is wrapped, and the wrapper's line comes last.
        const params = { ...addParams(cidVersion), "wrap-with-directory": String(files.length > 0) }
        return post(network, "add", params, HttpClientRequest.bodyStream(multipartDirectory(files, boundary), {
          contentType: `multipart/form-data; boundary=${boundary}`
        })).pipe(
          Effect.flatMap((response) => response.text),
          Effect.flatMap((text) => Schema.decodeUnknownEffect(AddedLine)(text.trim().split("\n").at(-1))),
          Effect.map(({ Hash }) => ({ cid: Hash, size: files.reduce((total, file) => total + file.content.byteLength, 0) })),
          Effect.mapError((error) => error._tag === "ContentStoreUnavailable" ? error : unavailable("addDirectory")(error))
        )
      },
      walk: (cid, network) =>
        Effect.gen(function*() {
          if (!(yield* isDirectory(cid, network))) return yield* new NotADirectory({ cid })
          const found: Array<DirectoryEntry> = []
          const visit = (directory: string, prefix: string): Effect.Effect<void, ContentNotFound | ContentStoreUnavailable | ContentTimeout> =>
            Effect.gen(function*() {
              for (const link of yield* links(directory, network)) {
                const path = `${prefix}${link.name}`
                found.push({ path, cid: link.cid, kind: link.kind, size: link.size })
                if (link.kind === "directory") yield* visit(link.cid, `${path}/`)
              }
            })
          yield* visit(cid, "")
          return found as ReadonlyArray<DirectoryEntry>
        }).pipe(
          // A block missing anywhere below is the whole directory missing from this network.
          Effect.mapError((error) => error._tag === "ContentNotFound" ? new ContentNotFound({ cid, network }) : error)
        ),
      has: (cid, network) =>
        read("block/stat", cid, network).pipe(
          Effect.flatMap((response) => Effect.mapError(response.text, unavailable("block/stat"))),
          bounded("block/stat", cid),
          Effect.as(true),
          Effect.catchTag("ContentNotFound", () => Effect.succeed(false))
        ),
      block: (cid, network) =>
        read("block/get", cid, network).pipe(
          Effect.flatMap((response) => Effect.mapError(response.arrayBuffer, unavailable("block/get"))),
          bounded("block/get", cid),
          Effect.map((bytes) => new Uint8Array(bytes))
        ),
      car: (cid, network) => streamed("dag/export", cid, network),
      putBlocks: (root, blocks, network) =>
        Effect.gen(function*() {
          // One `block/put` per codec and hash function, in batches of a few MiB, unpinned; then the root pinned.
          const groups = new Map<string, Array<{ readonly cid: CID; readonly bytes: Uint8Array }>>()
          for (const block of blocks) {
            const cid = CID.parse(block.cid)
            const codec = cid.code === 0x55 ? "raw" : cid.code === 0x70 ? "dag-pb" : undefined
            const mhtype = cid.multihash.code === 0x12 ? "sha2-256" : cid.multihash.code === 0x13 ? "sha2-512" : cid.multihash.code === 0 ? "identity" : undefined
            if (codec === undefined || mhtype === undefined) {
              return yield* new ContentStoreUnavailable({ operation: "block/put", cause: new Error(`no codec or hash for ${cid}`) })
            }
            const key = `${codec} ${mhtype}`
            groups.set(key, [...groups.get(key) ?? [], { cid, bytes: block.bytes }])
          }
          for (const [key, group] of groups) {
            const [codec, mhtype] = key.split(" ") as [string, string]
            for (let start = 0; start < group.length;) {
              let end = start
              let bytes = 0
              while (end < group.length && (end === start || bytes + group[end]!.bytes.byteLength <= 8 * 1024 * 1024)) bytes += group[end++]!.bytes.byteLength
              const batch = group.slice(start, end)
              start = end
              const boundary = `cairn-${crypto.randomUUID()}`
              const encoder = new TextEncoder()
              const body = new Uint8Array(Buffer.concat([
                ...batch.flatMap(({ cid, bytes }) => [
                  encoder.encode(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${cid}"\r\nContent-Type: application/octet-stream\r\n\r\n`),
                  bytes,
                  encoder.encode("\r\n")
                ]),
                encoder.encode(`--${boundary}--\r\n`)
              ]))
              yield* post(network, "block/put", { "cid-codec": codec, mhtype, pin: "false", "allow-big-block": "true" },
                HttpClientRequest.bodyUint8Array(body, `multipart/form-data; boundary=${boundary}`)).pipe(
                  Effect.flatMap((response) => Effect.mapError(response.text, unavailable("block/put"))),
                  Effect.catchTag("KuboRefused", (refused) => Effect.fail(new ContentStoreUnavailable({ operation: "block/put", cause: refused })))
                )
            }
          }
          yield* post(network, "pin/add", { arg: root, offline: "true" }).pipe(
            Effect.flatMap((response) => Effect.mapError(response.text, unavailable("pin/add"))),
            Effect.catchTag("KuboRefused", (refused) => Effect.fail(new ContentStoreUnavailable({ operation: "pin/add", cause: refused })))
          )
        })
    })
  })

export const layer = (options: Options) =>
  Layer.effect(ContentStore, make(options)).pipe(Layer.provide(FetchHttpClient.layer))
