/**
 * Commands to one Kubo node's RPC API (Kubo takes only POST), for the snapshot store: any answer but 2xx is a
 * KuboRefused with Kubo's message, a node that cannot be reached is ContentStoreUnavailable.
 */
import { ContentStoreUnavailable } from "@cairn/content-store"
import { Data, Effect, Option, Schema } from "effect"
import { HttpClient, HttpClientRequest, type HttpClientResponse } from "effect/http"

/** Kubo answered a command with an error. */
export class KuboRefused extends Data.TaggedError("KuboRefused")<{ readonly status: number; readonly message: string }> {}

// Kubo answers a missing block with a 500 such as "block was not found locally (offline): ipld: could not find …".
// The status matters: a wrong API URL gets a plain "404 page not found", which is a broken node, not absent content.
export const meansNotFound = (refusal: KuboRefused) => refusal.status === 500 && /not found|could not find/i.test(refusal.message)

const ErrorBody = Schema.fromJsonString(Schema.Struct({ Message: Schema.String }))

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

export interface KuboRpc {
  /** Posts one command; the response is 2xx. */
  readonly post: (
    command: string,
    params: Record<string, string>,
    withBody?: (request: HttpClientRequest.HttpClientRequest) => HttpClientRequest.HttpClientRequest
  ) => Effect.Effect<HttpClientResponse.HttpClientResponse, ContentStoreUnavailable | KuboRefused>
  /** The response's body as text; a body that breaks off is the node failing. */
  readonly text: (command: string, response: HttpClientResponse.HttpClientResponse) => Effect.Effect<string, ContentStoreUnavailable>
}

export const makeKuboRpc = (apiUrl: string) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    const base = apiUrl.replace(/\/+$/, "")
    return {
      post: (command, params, withBody = (request) => request) =>
        client.execute(HttpClientRequest.post(`${base}/api/v0/${command}`).pipe(HttpClientRequest.setUrlParams(params), withBody)).pipe(
          Effect.mapError((cause) => new ContentStoreUnavailable({ operation: command, cause })),
          Effect.flatMap((response) => response.status < 300 ? Effect.succeed(response) : refusal(response))
        ),
      text: (command, response) =>
        Effect.mapError(response.text, (cause) => new ContentStoreUnavailable({ operation: command, cause }))
    } satisfies KuboRpc
  })
