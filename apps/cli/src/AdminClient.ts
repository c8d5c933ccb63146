/**
 * The CLI's client of the server's admin API: `CAIRN_URL` (default http://127.0.0.1:3000) and the admin token
 * (`ADMIN_TOKEN`, or the file the server wrote in DATA_DIR). Errors from the server are shown as it sent them.
 */
import { AdminToken, type SecretFile } from "@cairn/auth"
import { Config, Effect, Redacted, Schema } from "effect"

export class AdminRequestFailed extends Schema.TaggedError<AdminRequestFailed>()("AdminRequestFailed", {
  detail: Schema.String
}) {
  // What `cairn: …` prints on failure (the default message of a tagged error is empty).
  override get message() {
    return this.detail
  }
}

export const request = (
  method: "POST" | "GET" | "DELETE",
  path: string,
  body?: unknown
): Effect.Effect<unknown, AdminRequestFailed | AdminToken.InvalidAdminToken | SecretFile.SecretFileError | Config.ConfigError> =>
  Effect.gen(function*() {
    const base = yield* Config.String("CAIRN_URL").pipe(Config.withDefault("http://127.0.0.1:3000"))
    const dataDir = yield* Config.String("DATA_DIR").pipe(Config.withDefault("./data"))
    const token = yield* AdminToken.read({ dataDir })
    const response = yield* Effect.tryPromise({
      try: () =>
        fetch(new URL(path, base), {
          method,
          headers: { authorization: `Bearer ${Redacted.value(token)}`, "content-type": "application/json" },
          ...(body === undefined ? {} : { body: JSON.stringify(body) })
        }),
      catch: (cause) => new AdminRequestFailed({ detail: `cannot reach the server at ${base} (${String(cause)})` })
    })
    const text = yield* Effect.promise(() => response.text())
    if (!response.ok) {
      let message = text
      try {
        message = (JSON.parse(text) as { error?: string }).error ?? text
      } catch {
        // not JSON: show it as it came
      }
      return yield* new AdminRequestFailed({ detail: `${response.status} ${message}` })
    }
    return (JSON.parse(text) as { data: unknown }).data
  })
