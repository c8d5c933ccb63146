/**
 * The ContentStore port on Kubo's RPC API. One Kubo node has one blockstore, so each network is its own node:
 * public content goes to one that may run a gateway, private content to one with no gateway and no networking.
 * Reads pass `offline=true`, so a CID the node does not hold fails at once instead of being searched for.
 */
import { ContentNotFound, ContentStore, ContentStoreUnavailable, type Network } from "@cairn/content-store"
import { Data, Effect, Layer, Option, Schema, Stream } from "effect"
import { FetchHttpClient, HttpClient, HttpClientRequest, type HttpClientResponse } from "effect/http"
import { CID } from "multiformats/cid"

export interface Options {
  /** The RPC API of the node behind the public gateway, such as `http://127.0.0.1:5001`. */
  readonly publicApiUrl: string
  /** The RPC API of the node that keeps private content: no gateway, no networking. */
  readonly privateApiUrl: string
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

export const make = (options: Options) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    const apiUrls = { public: options.publicApiUrl.replace(/\/+$/, ""), private: options.privateApiUrl.replace(/\/+$/, "") }

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

    /** Runs a read command on a CID, offline. A malformed CID, or a refusal that says a block is missing, is ContentNotFound. */
    const read = (command: string, cid: string, network: Network) =>
      Effect.try({ try: () => CID.parse(cid), catch: () => new ContentNotFound({ cid, network }) }).pipe(
        Effect.flatMap((root) => post(network, command, { arg: root.toString(), offline: "true" })),
        Effect.catchTag("KuboRefused", (refused) =>
          Effect.fail(
            meansNotFound(refused)
              ? new ContentNotFound({ cid, network })
              : new ContentStoreUnavailable({ operation: command, cause: refused })
          ))
      )

    const unavailable = (operation: string) => (cause: unknown) => new ContentStoreUnavailable({ operation, cause })

    const streamed = (command: string, cid: string, network: Network) =>
      Stream.unwrap(read(command, cid, network).pipe(
        Effect.map((response) => response.stream.pipe(Stream.mapError(unavailable(command))))
      ))

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
      cat: (cid, network) => streamed("cat", cid, network),
      has: (cid, network) =>
        read("block/stat", cid, network).pipe(
          Effect.flatMap((response) => Effect.mapError(response.text, unavailable("block/stat"))),
          Effect.as(true),
          Effect.catchTag("ContentNotFound", () => Effect.succeed(false))
        ),
      block: (cid, network) =>
        read("block/get", cid, network).pipe(
          Effect.flatMap((response) => Effect.mapError(response.arrayBuffer, unavailable("block/get"))),
          Effect.map((bytes) => new Uint8Array(bytes))
        ),
      car: (cid, network) => streamed("dag/export", cid, network)
    })
  })

export const layer = (options: Options) =>
  Layer.effect(ContentStore, make(options)).pipe(Layer.provide(FetchHttpClient.layer))
