/**
 * Checks a response against the OpenAPI document the server itself serves (`/openapi.json`): the HTTP test kit
 * (TestRuntime.ts) runs every JSON response it gets through `check`, so each test of the suite also checks that
 * the document describes what the route really sent. A success must be a documented status and fit its schema; a
 * failure must be the `{error}` body. Operations whose success has no schema yet are only recorded (`skipped`);
 * requests outside the document (probes, the gateway, unknown routes) are not checked.
 */
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js"

interface Operation {
  readonly responses: Record<string, { readonly content?: Record<string, { readonly schema?: unknown }> }>
}

export interface Document {
  readonly paths: Record<string, Record<string, Operation>>
  readonly components: { readonly schemas: Record<string, unknown> }
}

export interface ResponseValidator {
  /** Throws when the response does not fit the document. */
  readonly check: (method: string, url: string, status: number, body: unknown) => void
  /** `METHOD path` of the operations a response was seen for whose success has no schema. */
  readonly skipped: ReadonlySet<string>
}

/** `#/components/schemas/X` as a reference into the one shared definitions schema. */
const relocate = (schema: unknown): unknown => JSON.parse(JSON.stringify(schema).replaceAll("\"#/components/schemas/", "\"components.json#/$defs/"))

const literalSegments = (template: string) => template.split("/").filter((s) => s !== "" && !s.startsWith("{")).length

export const make = (document: Document): ResponseValidator => {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false })
  ajv.addSchema({ $id: "components.json", $defs: relocate(document.components.schemas) as object })
  const templates = Object.keys(document.paths).map((template) => ({
    template,
    pattern: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{[^}]+\}/g, "[^/]+")}$`)
  })).sort((a, b) => literalSegments(b.template) - literalSegments(a.template))
  const compiled = new Map<string, ValidateFunction>()
  const skipped = new Set<string>()

  const validator = (key: string, schema: unknown) => {
    let validate = compiled.get(key)
    if (validate === undefined) {
      validate = ajv.compile(relocate(schema) as object)
      compiled.set(key, validate)
    }
    return validate
  }

  const check = (method: string, url: string, status: number, body: unknown) => {
    const path = new URL(url, "http://cairn").pathname
    const found = templates.find(({ template, pattern }) => pattern.test(path) && document.paths[template]?.[method.toLowerCase()] !== undefined)
    const operation = found === undefined ? undefined : document.paths[found.template]?.[method.toLowerCase()]
    // Not an API route (a probe, the gateway, no route at all, input refused before routing): nothing to check here;
    // that every served API route is documented is OpenApi.test.ts's to check.
    if (found === undefined || operation === undefined) return
    const name = `${method.toUpperCase()} ${found.template}`
    const documented = operation.responses[String(status)]
    if (documented === undefined) {
      if (status >= 400) return checkSchema(`${name} error`, { $ref: "#/components/schemas/ErrorBody" }, body, name, status)
      throw new Error(`${name} answered ${status}, which the OpenAPI document does not list`)
    }
    const schema = documented.content?.["application/json"]?.schema
    if (schema === undefined) {
      skipped.add(name)
      return
    }
    checkSchema(`${name} ${status}`, schema, body, name, status)
  }

  const checkSchema = (key: string, schema: unknown, body: unknown, name: string, status: number) => {
    const validate = validator(key, schema)
    if (!validate(body)) {
      throw new Error(`${name} answered ${status} with a body the OpenAPI document does not describe: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(body).slice(0, 500)}`)
    }
  }

  return { check, skipped }
}
