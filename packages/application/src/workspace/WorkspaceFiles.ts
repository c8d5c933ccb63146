/**
 * Files in an agent's workspace through the API: an upload is written whole and atomically to
 * `uploads/<filename>` through the AgentEngine port and recorded on the agent's uploads log (name, size, SHA-256;
 * never the content) with the caller as actor; a read returns one file's bytes within the configured cap. An upload
 * that would leave the data directory's disk below its reserve is refused before it is written (507, DiskReserve.ts).
 */
import { AgentEngine } from "@cairn/agent-engine"
import { Upload } from "@cairn/domain"
import { Context, Effect, Layer } from "effect"
import type { Principal } from "../Access.ts"
import { Agents } from "../agents/Agents.ts"
import { CommandHandler } from "../CommandHandler.ts"
import { DiskReserve } from "../DiskReserve.ts"
import { now } from "../Now.ts"
import { WorkspaceLimits } from "../workspaces/WorkspaceLimits.ts"

export interface UploadedFile {
  /** Relative to the workspace: `uploads/<filename>`, which `read` takes back. */
  readonly path: string
  readonly filename: string
  readonly size: number
}

export interface WorkspaceFileContent {
  readonly path: string
  readonly content: Uint8Array
}

const sha256 = (content: Uint8Array) =>
  Effect.promise(() => crypto.subtle.digest("SHA-256", content as Uint8Array<ArrayBuffer>)).pipe(
    Effect.map((digest) => Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join(""))
  )

export class WorkspaceFiles extends Context.Service<WorkspaceFiles>()("cairn/WorkspaceFiles", {
  make: Effect.gen(function*() {
    const commands = yield* CommandHandler
    const engine = yield* AgentEngine
    const agents = yield* Agents
    const limits = yield* WorkspaceLimits
    const reserve = yield* DiskReserve

    const upload = Effect.fn("WorkspaceFiles.upload")(function*(
      principal: Principal,
      agentId: string,
      input: { readonly filename: unknown; readonly contentBase64: unknown }
    ) {
      const { workspaceId, userId } = principal
      yield* agents.get(workspaceId, agentId)
      const filename = yield* Effect.fromResult(Upload.validateFilename(input.filename))
      const content = yield* Effect.fromResult(Upload.decodeBase64(input.contentBase64))
      if (content.byteLength > limits.uploadMaxBytes) return yield* new Upload.FileTooLarge({ maxBytes: limits.uploadMaxBytes })
      const path = Upload.uploadPath(filename)
      yield* reserve.ensureRoom(content.byteLength)
      yield* engine.writeWorkspaceFiles(agentId, [{ path, content }])
      const record = new Upload.RecordUpload({
        agentId, workspaceId, filename, path, size: content.byteLength, sha256: yield* sha256(content), at: yield* now
      })
      yield* commands.record(Upload.decider, Upload.stream(agentId), record, { actor: userId })
      return { path, filename, size: content.byteLength } satisfies UploadedFile
    })

    const read = Effect.fn("WorkspaceFiles.read")(function*(principal: Principal, agentId: string, requested: unknown) {
      yield* agents.get(principal.workspaceId, agentId)
      const path = yield* Effect.fromResult(Upload.validateReadPath(requested))
      const found = yield* engine.readWorkspaceFileWithin(agentId, path, limits.fileReadMaxBytes)
      switch (found._tag) {
        case "Found":
          return { path, content: found.content } satisfies WorkspaceFileContent
        case "Missing":
          return yield* new Upload.FileNotFound({ path })
        case "TooLarge":
          return yield* new Upload.FileTooLarge({ maxBytes: limits.fileReadMaxBytes })
      }
    })

    return {
      upload,
      read,
      /**
       * The largest request body an upload within the limit can take (its base64 and the JSON around it): the HTTP
       * layer stops reading past it.
       */
      maxUploadBodyBytes: Upload.maxBodyBytes(limits.uploadMaxBytes)
    }
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
