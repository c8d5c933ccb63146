/**
 * The DNS port: what Cairn asks of the Domain Name System. Today one question, the TXT records at a name (custom
 * domains prove ownership with one at `_service-verify.<domain>`). A name that does not exist, or has no TXT
 * records, answers an empty list; only a resolver that cannot be asked (unreachable, timing out) fails.
 */
import { Context, type Effect, Schema } from "effect"

/** No answer could be had: every configured server was unreachable or timed out. */
export class DnsUnavailable extends Schema.TaggedError<DnsUnavailable>()("DnsUnavailable", {
  name: Schema.String,
  /** The resolver's error code (ETIMEOUT, ECONNREFUSED, …), for logs. */
  code: Schema.String
}) {
  readonly unavailable = true
  readonly status = 503
  override readonly message = "DNS lookup failed"
}

export interface TxtAnswer {
  /** Each TXT record at the name, its character-strings joined (RFC 7208 §3.3). */
  readonly records: ReadonlyArray<string>
  /**
   * Why there are none, when there are none and the resolver said so: `ENOTFOUND` (no such name), `ENODATA` (no TXT
   * there), `ESERVFAIL` (the domain's own servers fail), `EREFUSED`. For messages only.
   */
  readonly reason?: string
}

export class Dns extends Context.Service<Dns, {
  readonly txt: (name: string) => Effect.Effect<TxtAnswer, DnsUnavailable>
}>()("cairn/Dns") {}
