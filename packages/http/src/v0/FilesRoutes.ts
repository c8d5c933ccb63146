/**
 * Files in an agent's workspace: `POST /v0/agents/{agentId}/files/upload` `{filename, contentBase64}` writes
 * `uploads/<filename>` (413 `File too large` past the limit, decided while the body is read; 507 `Insufficient
 * storage` when it would leave the data directory's disk below its reserve), and
 * `GET /v0/agents/{agentId}/files?path=<path>` answers one file's raw bytes, typed by its extension.
 */
import { WorkspaceFiles } from "@cairn/application"
import { Agent, DiskSpace, Upload } from "@cairn/domain"
import { Effect, Schema } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import * as Body from "../Body.ts"
import * as ContentType from "../ContentType.ts"
import { standardHeaders } from "../Respond.ts"
import * as Kit from "./Kit.ts"

// Fields are checked by the domain's rules, so a missing or malformed one gets its own `Validation failed` detail.
const UploadBody = Schema.Struct({ filename: Schema.optional(Schema.Unknown), contentBase64: Schema.optional(Schema.Unknown) })

const FileQuery = Schema.Struct({ path: Schema.String })

/** Where an upload was written (`uploads/<filename>`, which the read route takes back) and its size. */
const UploadedWire = Schema.Struct({ path: Schema.String, filename: Schema.String, size: Schema.Int })

/** Content types by extension for what agents' workspaces usually hold; other files are sniffed. */
const byExtension: Readonly<Record<string, string>> = {
  txt: "text/plain; charset=utf-8",
  md: "text/markdown; charset=utf-8",
  markdown: "text/markdown; charset=utf-8",
  log: "text/plain; charset=utf-8",
  csv: "text/csv; charset=utf-8",
  tsv: "text/tab-separated-values; charset=utf-8",
  html: "text/html; charset=utf-8",
  htm: "text/html; charset=utf-8",
  css: "text/css; charset=utf-8",
  xml: "application/xml",
  svg: "image/svg+xml",
  json: "application/json",
  jsonl: "application/x-ndjson",
  ndjson: "application/x-ndjson",
  json5: "application/json5",
  yaml: "application/yaml",
  yml: "application/yaml",
  toml: "application/toml",
  js: "text/javascript; charset=utf-8",
  mjs: "text/javascript; charset=utf-8",
  cjs: "text/javascript; charset=utf-8",
  ts: "text/plain; charset=utf-8",
  py: "text/x-python; charset=utf-8",
  sh: "application/x-sh",
  pdf: "application/pdf",
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
  ico: "image/vnd.microsoft.icon",
  mp3: "audio/mpeg",
  wav: "audio/wav",
  ogg: "audio/ogg",
  mp4: "video/mp4",
  webm: "video/webm",
  zip: "application/zip",
  gz: "application/gzip",
  tgz: "application/gzip",
  tar: "application/x-tar",
  wasm: "application/wasm",
  docx: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
  xlsx: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
  pptx: "application/vnd.openxmlformats-officedocument.presentationml.presentation"
}

const extensionOf = (path: string) => {
  const name = path.slice(path.lastIndexOf("/") + 1)
  const dot = name.lastIndexOf(".")
  return dot <= 0 ? undefined : name.slice(dot + 1).toLowerCase()
}

const contentTypeOf = (path: string, content: Uint8Array) => {
  const known = byExtension[extensionOf(path) ?? ""]
  return known === undefined ? ContentType.sniff(content.subarray(0, 4100)) : Effect.succeed(known)
}

/** `inline` with the file's name, encoded as RFC 6266 asks (an ASCII fallback and the UTF-8 name). */
const disposition = (path: string) => {
  const name = path.slice(path.lastIndexOf("/") + 1)
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, "_")
  return `inline; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`
}

export const layer = HttpRouter.use((router) =>
  Effect.gen(function*() {
    const { agentRoute } = yield* Kit.make(router)
    const files = yield* WorkspaceFiles

    yield* agentRoute("POST", "/v0/agents/:agentId/files/upload", { summary: "Upload a file into the agent's workspace (uploads/<filename>)", body: { schema: UploadBody }, response: { schema: UploadedWire }, errors: [new Agent.AgentNotFound({ agentId: "" }), new Upload.FileTooLarge({ maxBytes: 0 }), new DiskSpace.InsufficientStorage({ freeBytes: 0, reserveBytes: 0, bytes: 0 })] }, ({ principal, agentId, request }) =>
      Effect.gen(function*() {
        const maxBytes = files.maxUploadBodyBytes
        const input = yield* Body.jsonWithin(request, UploadBody, maxBytes, () => new Upload.FileTooLarge({ maxBytes }), "contentBase64")
        const { path, filename, size } = yield* files.upload(principal, agentId, { filename: input.filename, contentBase64: input.contentBase64 })
        return { path, filename, size } satisfies typeof UploadedWire.Type
      }))

    yield* agentRoute("GET", "/v0/agents/:agentId/files", { summary: "Read one file of the agent's workspace (its raw bytes)", query: FileQuery, response: { contentType: "application/octet-stream" }, errors: [new Agent.AgentNotFound({ agentId: "" }), new Upload.FileNotFound({ path: "" }), new Upload.FileTooLarge({ maxBytes: 0 })] }, ({ principal, agentId, request }) =>
      Effect.gen(function*() {
        const path = Kit.query(request, "path") ?? undefined
        const file = yield* files.read(principal, agentId, path)
        return HttpServerResponse.uint8Array(file.content, {
          contentType: yield* contentTypeOf(file.path, file.content),
          headers: standardHeaders({
            "content-disposition": disposition(file.path),
            // A workspace file is the agent's (or anyone's it talked to): never sniffed into something else, and
            // never run as a page of this origin.
            "x-content-type-options": "nosniff",
            "content-security-policy": "sandbox; default-src 'none'",
            "cache-control": "no-store"
          })
        })
      }))
  })
)
