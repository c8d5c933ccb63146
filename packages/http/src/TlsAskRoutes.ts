/**
 * Caddy's on-demand TLS `ask` endpoint: `GET /tls/ask?domain=<host>` answers 200 only for an active domain (a
 * subdomain, or a verified custom domain, of a live agent) or a live agent's own host (`<agentId>.<AGENTS_DOMAIN>`,
 * decision 0046) and 404 otherwise, so Caddy gets certificates for those
 * names and no others. Open (Caddy calls it without credentials) and it says only yes or no; operators keep it on
 * a private interface all the same (infra/Caddyfile, docs/operations.md "Domains, DNS and TLS").
 */
import { Domains } from "@cairn/application"
import { Effect, Option } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"

const yes = HttpServerResponse.jsonUnsafe({ status: "ok" })
const no = HttpServerResponse.jsonUnsafe({ error: "Unknown domain" }, { status: 404 })

export const layer = HttpRouter.use((router) =>
  Effect.gen(function*() {
    const domains = yield* Domains
    yield* router.add("GET", "/tls/ask", (request) => {
      const domain = new URL(request.url, "http://cairn").searchParams.get("domain")
      if (domain === null || domain === "") return Effect.succeed(no)
      return domains.routeFor(domain).pipe(
        Effect.flatMap((route): Effect.Effect<boolean> =>
          Option.isSome(route) ? Effect.succeed(true) : Effect.map(domains.agentHostFor(domain), Option.isSome)),
        Effect.map((known) => known ? yes : no),
        Effect.catchCause((cause) => Effect.logError("TLS ask failed", cause).pipe(Effect.as(HttpServerResponse.jsonUnsafe({ error: "Service unavailable" }, { status: 503 }))))
      )
    })
  })
)
