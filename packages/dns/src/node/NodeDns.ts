/**
 * The Dns port on Node's resolver (`node:dns/promises` `Resolver`, c-ares): the system's servers by default, or the
 * given ones (`DNS_SERVERS`: `1.1.1.1`, `127.0.0.1:5353`, `[::1]:53`, comma-separated). A lookup is bounded: each
 * try waits `timeoutMs`, `tries` times per server. Answers are never cached here (a record just published must be
 * seen by the next verify); the servers' own caches apply.
 */
import { Effect, Layer } from "effect"
import { Resolver } from "node:dns/promises"
import { Dns, DnsUnavailable, type TxtAnswer } from "../Dns.ts"

export interface NodeDnsOptions {
  /** The servers to ask (the system's when absent or empty). */
  readonly servers?: ReadonlyArray<string>
  /** How long one try waits for an answer (2000 ms). */
  readonly timeoutMs?: number
  /** Tries per server (2). */
  readonly tries?: number
}

/** Codes that are an answer about the name (nothing there), not a failure to ask. */
const answered = new Set(["ENOTFOUND", "ENODATA", "ESERVFAIL", "EREFUSED", "EBADNAME", "ENONAME"])

/** `DNS_SERVERS` as a list; empty entries dropped. */
export const parseServers = (setting: string): ReadonlyArray<string> =>
  setting.split(",").map((server) => server.trim()).filter((server) => server !== "")

export const make = (options: NodeDnsOptions = {}): Dns["Service"] => {
  const resolver = new Resolver({ timeout: options.timeoutMs ?? 2000, tries: options.tries ?? 2 })
  if (options.servers !== undefined && options.servers.length > 0) resolver.setServers([...options.servers])
  return {
    txt: (name) =>
      Effect.tryPromise({
        try: async (): Promise<TxtAnswer> => ({ records: (await resolver.resolveTxt(name)).map((chunks) => chunks.join("")) }),
        catch: (error) => String((error as { code?: unknown }).code ?? "EUNKNOWN")
      }).pipe(
        Effect.catch((code) => answered.has(code) ? Effect.succeed<TxtAnswer>({ records: [], reason: code }) : Effect.fail(new DnsUnavailable({ name, code })))
      )
  }
}

export const layer = (options: NodeDnsOptions = {}) => Layer.sync(Dns, () => make(options))
