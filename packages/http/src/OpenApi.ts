/**
 * The OpenAPI 3.1 document of Cairn's API, built from the route catalog (RouteCatalog.ts): each entry's Schemas
 * become JSON Schemas with Effect's own converter, and each documented error an example of `{error}` under its
 * status. The failures every route shares are added here from what the entry says: 401/403 from its auth, 400
 * `Validation failed` when it takes input, 500 and 503 always (ErrorResponse.ts is where they are answered).
 */
import { Forbidden, MissingUserId, Unauthorized } from "@cairn/application"
import { ValidationFailed } from "@cairn/domain"
import { JsonSchema, Schema } from "effect"
import type { Entry, ErrorDoc } from "./RouteCatalog.ts"

export type Document = Record<string, unknown> & {
  readonly paths: Record<string, Record<string, Operation>>
  readonly components: { readonly schemas: Record<string, unknown>; readonly [key: string]: unknown }
}

export interface Operation {
  readonly operationId: string
  readonly summary: string
  readonly responses: Record<string, { readonly content?: Record<string, { readonly schema?: unknown }> }>
  readonly [key: string]: unknown
}

const internal: ErrorDoc = { _tag: "InternalServerError", status: 500, message: "Internal server error" }
const unavailable: ErrorDoc = { _tag: "ServiceUnavailable", status: 503, message: "Service unavailable" }

/** The router's `/v0/agents/:agentId` as OpenAPI's `/v0/agents/{agentId}`. */
export const toOpenApiPath = (path: string) => path.replace(/:([A-Za-z0-9_]+)/g, "{$1}")

const paramsOf = (path: string) => [...path.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1]!)

const operationId = (entry: Entry) =>
  entry.method.toLowerCase() + entry.path.split("/").filter((s) => s !== "").map((segment) => {
    const word = segment.startsWith(":") ? `By${segment.slice(1, 2).toUpperCase()}${segment.slice(2)}` : segment
    return word.split(/[^A-Za-z0-9]+/).filter((w) => w !== "").map((w) => w[0]!.toUpperCase() + w.slice(1)).join("")
  }).join("")

/**
 * An operation's group: `v3 files`, `v0 agents`, `v0 agent tasks` (an agent's own routes), `admin keys`; the
 * routes outside the versioned prefixes by what they are for (the SDK's aliases beside their `/v3` twins).
 */
const tagOf = (path: string) => {
  const [first, second, third, fourth] = path.split("/").filter((s) => s !== "")
  if (first === "v0" && second === "agents" && third === ":agentId" && fourth !== undefined) return `v0 agent ${fourth}`
  if (first === "v0" || first === "v3" || first === "admin") return `${first} ${second ?? ""}`.trim()
  if (first === "ipfs" || first === "files") return "gateway"
  if (first === "data") return "v3 data"
  if (first === "pinning") return "v3 files"
  return "operations"
}

/** The groups in the order a reader meets them: the files API, its gateway, agents, the operator's, operations. */
const tagRank = (tag: string) =>
  tag.startsWith("v3 ") ? 0 : tag === "gateway" ? 1 : tag.startsWith("v0 ") ? 2 : tag.startsWith("admin ") ? 3 : 4

const tagDescriptions: Record<string, string> = {
  gateway: "Content by CID (`/ipfs/{cid}/{path}`, `/files/{cid}/{path}`)",
  operations: "Probes, metrics and the keys that verify API keys"
}

const errorBody = { $ref: "#/components/schemas/ErrorBody" }

/** The failures every route with this entry's shape shares. */
const impliedErrors = (entry: Entry): ReadonlyArray<ErrorDoc> => [
  ...(entry.body?.schema !== undefined || entry.query !== undefined || entry.path.includes(":")
    ? [new ValidationFailed({ detail: "<what was wrong with the input>" })]
    : []),
  ...(entry.auth === "none" ? [] : [new Unauthorized({ reason: "missing-credentials" })]),
  ...(entry.auth === "apiKey" || entry.auth === "apiKeyOrGateway" ? [new MissingUserId()] : []),
  ...(entry.scope === undefined ? [] : [new Forbidden({ scope: entry.scope })]),
  internal,
  unavailable
]

const security = (entry: Entry) => {
  switch (entry.auth) {
    case "none":
      return []
    case "admin":
      return [{ adminToken: [] }]
    case "apiKey":
      return [{ apiKey: entry.scope === undefined ? [] : [entry.scope] }]
    case "apiKeyOrGateway":
      return [{ apiKey: entry.scope === undefined ? [] : [entry.scope] }, { gatewayToken: [] }, { platformToken: [] }]
    case "platform":
      return [{ platformToken: [] }]
  }
}

/** Builds the document; `schemas` collects the named definitions the converted Schemas share. */
export const make = (entries: ReadonlyArray<Entry>, info: { readonly title: string; readonly version: string; readonly description?: string }): Document => {
  const schemas: Record<string, unknown> = {
    ErrorBody: {
      type: "object",
      description: "Every failure: the documented string in `error`; some carry more fields (a failed create's `agent`).",
      properties: { error: { type: "string" } },
      required: ["error"]
    }
  }
  // A response is described closed (`additionalProperties: false`): the routes encode their answers with these
  // Schemas, so nothing else is sent. Request bodies stay open, as their decoding ignores unknown fields.
  const jsonSchema = (schema: Schema.Top, closed = false) => {
    const document = Schema.toJsonSchemaDocument(schema, closed ? { onExcessProperty: "error" } : undefined)
    const openApi = JsonSchema.toMultiDocumentOpenApi3_1({ dialect: "draft-2020-12", schemas: [document.schema], definitions: document.definitions })
    Object.assign(schemas, openApi.definitions)
    return openApi.schemas[0]
  }

  const paths: Record<string, Record<string, Operation>> = {}
  for (const entry of entries) {
    const responses: Record<string, Record<string, unknown>> = {}
    for (const success of [entry.response ?? {}, ...(entry.otherResponses ?? [])]) {
      const status = success.status ?? 200
      // Another response of the same status is another content type of it (a chat's JSON or its event stream).
      const earlier = responses[String(status)] as { description: string; content?: Record<string, unknown> } | undefined
      responses[String(status)] = {
        description: earlier === undefined ? success.description ?? entry.summary : `${earlier.description}; ${success.description ?? entry.summary}`,
        ...(status === 204 || success.empty === true ? {} : {
          content: {
            ...earlier?.content,
            [success.contentType ?? "application/json"]: success.schema === undefined ? {} : { schema: jsonSchema(success.schema, true) }
          }
        })
      }
    }
    const byStatus = new Map<number, Array<ErrorDoc>>()
    for (const error of [...(entry.errors ?? []), ...impliedErrors(entry)]) {
      const list = byStatus.get(error.status) ?? []
      if (!list.some((e) => e.message === error.message)) list.push(error)
      byStatus.set(error.status, list)
    }
    for (const [status, errors] of [...byStatus].sort(([a], [b]) => a - b)) {
      // A status the route answers with a body of its own (`/readyz`'s 503) keeps that description.
      if (responses[String(status)] !== undefined) continue
      const failure = entry.failure
      if (failure !== undefined) schemas[failure.name] = failure.jsonSchema
      responses[String(status)] = {
        description: errors.map((e) => e.message).join("; "),
        content: {
          "application/json": {
            schema: failure === undefined ? errorBody : { $ref: `#/components/schemas/${failure.name}` },
            examples: Object.fromEntries(errors.map((e, i) => [`${e._tag}${errors.slice(0, i).some((o) => o._tag === e._tag) ? i : ""}`, {
              summary: e.message,
              value: failure === undefined ? { error: e.message, ...(e as { details?: object }).details } : failure.example(e)
            }]))
          }
        }
      }
    }
    const queryParameters = entry.query === undefined ? [] : (() => {
      const schema = jsonSchema(entry.query) as { properties?: Record<string, unknown>; required?: ReadonlyArray<string> }
      return Object.entries(schema.properties ?? {}).map(([name, property]) => ({
        name,
        in: "query",
        required: schema.required?.includes(name) ?? false,
        schema: property
      }))
    })()
    const operation: Operation = {
      operationId: operationId(entry),
      summary: entry.summary,
      ...(entry.description === undefined ? {} : { description: entry.description }),
      tags: [tagOf(entry.path)],
      security: security(entry),
      parameters: [
        ...paramsOf(entry.path).map((name) => ({ name, in: "path", required: true, schema: { type: "string" } })),
        ...queryParameters,
        ...(entry.headers ?? []).map((h) => ({
          name: h.name,
          in: "header",
          required: h.required ?? false,
          schema: { type: "string" },
          ...(h.description === undefined ? {} : { description: h.description })
        }))
      ],
      ...(entry.body === undefined ? {} : {
        requestBody: {
          required: !(entry.body.optional ?? false),
          ...(entry.body.description === undefined ? {} : { description: entry.body.description }),
          content: { [entry.body.contentType ?? "application/json"]: entry.body.schema === undefined ? {} : { schema: jsonSchema(entry.body.schema) } }
        }
      }),
      responses
    }
    const path = toOpenApiPath(entry.path)
    paths[path] = { ...paths[path], [entry.method.toLowerCase()]: operation }
  }

  const tags = [...new Set(entries.map((entry) => tagOf(entry.path)))]
    .map((name, index) => ({ name, index }))
    .sort((a, b) => tagRank(a.name) - tagRank(b.name) || a.index - b.index)
    .map(({ name }) => ({ name, ...(tagDescriptions[name] === undefined ? {} : { description: tagDescriptions[name] }) }))

  return {
    openapi: "3.1.0",
    info: { title: info.title, version: info.version, ...(info.description === undefined ? {} : { description: info.description }) },
    tags,
    paths,
    components: {
      schemas,
      securitySchemes: {
        apiKey: { type: "http", scheme: "bearer", bearerFormat: "JWT", description: "An API key (`npm run cli -- key create`)." },
        gatewayToken: {
          type: "http",
          scheme: "bearer",
          description: "An agent's current gateway token (`gw_…`), on that agent's own routes; also as `?token=` or the `gw_token` cookie."
        },
        platformToken: {
          type: "http",
          scheme: "bearer",
          bearerFormat: "JWT",
          description: "A platform token (`POST /v0/agents/{id}/platform/token`, one hour), on its own agent's routes and `GET /v0/platform/whoami`."
        },
        adminToken: { type: "http", scheme: "bearer", description: "The admin token (`ADMIN_TOKEN`, or the file the server writes into DATA_DIR)." }
      }
    }
  }
}
