/**
 * The API's own description: `GET /openapi.json` (the OpenAPI 3.1 document built from the route catalog of this
 * very router, OpenApi.ts) and `GET /docs`, a reference page rendered by Scalar's standalone bundle, which Cairn
 * serves itself from the `@scalar/api-reference` package (`/docs/scalar.js`): it works offline, no CDN. Scalar is
 * configured (`configuration` below) so that the page asks nothing of any other host: no hosted fonts (the system's
 * fonts instead of fonts.scalar.com), no telemetry, no request proxy, and none of the buttons that lead to Scalar's
 * hosted services ("Ask AI", "Generate MCP", the developer tools' "Deploy"). A browser test holds it to that
 * (apps/server-node/test/DocsPage.test.ts). All open.
 */
import { Effect, FileSystem } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import * as OpenApi from "./OpenApi.ts"
import { json, standardHeaders } from "./Respond.ts"
import * as RouteCatalog from "./RouteCatalog.ts"

export const info = {
  title: "Cairn API",
  version: "1.0.0",
  description: "Files and signatures (`/v3`, wire-compatible with Pinata's v3 Files API), the agents control plane " +
    "(`/v0`) and the operator API (`/admin`). Every failure is `{error: <documented string>}` with its status; " +
    "the examples under each status are the exact strings."
}

/** Scalar's configuration for `/docs`: offline, nothing hosted. */
export const configuration = {
  url: "/openapi.json",
  withDefaultFonts: false,
  telemetry: false,
  agent: { disabled: true },
  mcp: { disabled: true },
  showDeveloperTools: "never",
  hideClientButton: false,
  documentDownloadType: "json"
}

/** An HTML attribute's value: the configuration's JSON with `&`, `"`, `<` and `>` escaped. */
const attribute = (text: string) =>
  text.replaceAll("&", "&amp;").replaceAll("\"", "&quot;").replaceAll("<", "&lt;").replaceAll(">", "&gt;")

const page = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Cairn API</title>
</head>
<body>
  <script id="api-reference" data-url="/openapi.json" data-configuration="${attribute(JSON.stringify(configuration))}"></script>
  <script src="/docs/scalar.js"></script>
</body>
</html>
`

/** Where the standalone bundle is: `dist/browser/standalone.js` beside the package's entry point. */
const bundlePath = () => new URL("./browser/standalone.js", import.meta.resolve("@scalar/api-reference")).pathname

export const layer = HttpRouter.use((router) =>
  Effect.gen(function*() {
    const catalog = yield* RouteCatalog.RouteCatalog
    const fs = yield* FileSystem.FileSystem
    // Built at the first request, when every route module has registered its entries.
    let document: string | undefined
    const documentText = () => (document ??= JSON.stringify(OpenApi.make(RouteCatalog.entries(catalog), info)))
    // Read at the first request for it; a runtime that cannot resolve the package answers 500 there, not at start.
    const bundle = yield* Effect.cached(Effect.suspend(() => fs.readFile(bundlePath())))

    yield* router.add("GET", "/openapi.json", Effect.sync(() =>
      HttpServerResponse.text(documentText(), { contentType: "application/json; charset=utf-8", headers: standardHeaders() })))
    yield* router.add("GET", "/docs", Effect.succeed(HttpServerResponse.html(page)))
    yield* router.add(
      "GET",
      "/docs/scalar.js",
      bundle.pipe(
        Effect.map((bytes) =>
          HttpServerResponse.uint8Array(bytes, { contentType: "text/javascript; charset=utf-8", headers: { "cache-control": "public, max-age=3600" } })
        ),
        Effect.catch((error) =>
          Effect.logError("The docs page's bundle could not be read", error).pipe(Effect.as(json({ error: "Internal server error" }, 500)))
        )
      )
    )
  })
)
