/**
 * The CLI's client of the server's admin API: `CAIRN_URL` (default http://127.0.0.1:3000) and the admin token
 * (`ADMIN_TOKEN`, or the file the server wrote in DATA_DIR). Before its first request a command says on stderr, in
 * one line, which server it talks to and why (`CAIRN_URL`, or the default when that is not set in the environment: a
 * shell variable that was not exported is not seen), so that a CLI aimed at the wrong server shows it; stdout keeps
 * only the command's output. A refusal is shown with the server's own `error` string and status (exit 1); a server
 * that cannot be reached, with the URL tried and how to start one (exit 3).
 */
import type { AdminToken } from "@cairn/auth"
import type { SecretFile } from "@cairn/auth/node"
import * as HashedAdminToken from "@cairn/auth/node/HashedAdminToken"
import { Config, Console, Effect, Option, Redacted } from "effect"
import { ServerRefused, ServerUnreachable, UsageError } from "./CliErrors.ts"

export type RequestError =
  | ServerRefused
  | ServerUnreachable
  | UsageError
  | AdminToken.InvalidAdminToken
  | SecretFile.SecretFileError
  | Config.ConfigError

/** Why a request failed, in the words of the socket error (`ECONNREFUSED`, `ENOTFOUND`…). */
const reasonOf = (cause: unknown): string => {
  const own = (cause as { code?: unknown } | undefined)?.code
  if (typeof own === "string") return own
  const inner = (cause as { cause?: { code?: unknown; message?: unknown } } | undefined)?.cause
  if (typeof inner?.code === "string") return inner.code
  if (typeof inner?.message === "string" && inner.message !== "") return inner.message
  return cause instanceof Error ? cause.message : String(cause)
}

/** The server's `error` string from a refusal's body; the body itself (shortened) when it is not Cairn's JSON. */
const errorOf = (text: string): string => {
  try {
    const error = (JSON.parse(text) as { error?: unknown }).error
    if (typeof error === "string") return error
  } catch {
    // not JSON: a proxy's page, say
  }
  const body = text.trim().replace(/\s+/g, " ")
  return body === "" ? "(no body)" : body.length > 200 ? `${body.slice(0, 200)}…` : body
}

export const defaultUrl = "http://127.0.0.1:3000"

/** Whether this process has said which server it talks to (once, before its first request). */
let announced = false

export const request = (
  method: "POST" | "GET" | "DELETE",
  path: string,
  body?: unknown
): Effect.Effect<unknown, RequestError> =>
  Effect.gen(function*() {
    const configured = yield* Config.option(Config.String("CAIRN_URL"))
    const base = Option.getOrElse(configured, () => defaultUrl)
    const url = URL.parse(path, base)
    if (url === null || !url.protocol.startsWith("http")) {
      return yield* new UsageError({ detail: `CAIRN_URL must be the server's http(s) address, such as http://127.0.0.1:3000, not "${base}"` })
    }
    if (!announced) {
      announced = true
      yield* Console.error(`cairn: server ${url.origin} (${Option.isSome(configured) ? "CAIRN_URL" : "the default: CAIRN_URL is not set"})`)
    }
    const dataDir = yield* Config.String("DATA_DIR").pipe(Config.withDefault("./data"))
    const token = yield* HashedAdminToken.read({ dataDir })
    const response = yield* Effect.tryPromise({
      try: () => send(url, method, Redacted.value(token), body === undefined ? undefined : JSON.stringify(body)),
      catch: (cause) => new ServerUnreachable({ url: url.origin, reason: reasonOf(cause) })
    })
    if (response.status < 200 || response.status > 299) {
      return yield* new ServerRefused({ status: response.status, error: errorOf(response.text), method, path: url.pathname })
    }
    return (JSON.parse(response.text) as { data: unknown }).data
  })

/**
 * One request with `node:http(s)`, not `fetch`: loading fetch's implementation (undici) is ~0.1 s of a CLI call
 * that is otherwise ~0.2 s (`npm run bench:cli`). The modules are taken with `getBuiltinModule`, not imported: an
 * ES import of `node:http` reads every export, `WebSocket` among them, which loads undici all the same.
 */
const send = (url: URL, method: string, token: string, body: string | undefined) =>
  new Promise<{ readonly status: number; readonly text: string }>((resolve, reject) => {
    const http = url.protocol === "https:" ? process.getBuiltinModule("node:https") : process.getBuiltinModule("node:http")
    const request = http.request(url, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        "content-type": "application/json",
        ...(body === undefined ? {} : { "content-length": Buffer.byteLength(body) })
      }
    }, (response) => {
      const chunks: Array<Buffer> = []
      response.on("data", (chunk: Buffer) => chunks.push(chunk))
      response.on("end", () => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }))
      response.on("error", reject)
    })
    request.on("error", reject)
    request.end(body)
  })
