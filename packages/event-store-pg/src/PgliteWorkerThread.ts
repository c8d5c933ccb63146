/**
 * The worker thread of PgliteWorker.ts: opens the embedded database (a new one copied from the template first) and
 * runs the wire messages the main thread posts, answering each with the bytes PGlite wrote. It imports only PGlite
 * and what opening it needs, so it starts at once beside the main thread's module loading.
 */
import { PGlite } from "@electric-sql/pglite"
import * as Module from "node:module"
import { parentPort, workerData } from "node:worker_threads"
import * as PgliteArtifacts from "./PgliteArtifacts.ts"
import { inProcess } from "./PgliteStream.ts"
import * as PgliteTemplate from "./PgliteTemplate.ts"

/** What the main thread posts. */
export type Request =
  | { readonly type: "run"; readonly id: number; readonly messages: Uint8Array }
  | { readonly type: "rollback"; readonly id: number }
  | { readonly type: "close"; readonly id: number }

/** What this thread posts: `opened` (or `failed`) once, then one `done` per request. */
export type Reply =
  | { readonly type: "opened" }
  | { readonly type: "failed"; readonly message: string }
  | { readonly type: "done"; readonly id: number; readonly data?: Uint8Array; readonly error?: string }

export interface Options {
  readonly dataDir: string
  readonly templates: string | undefined
}

Module.enableCompileCache?.()
const port = parentPort!
const { dataDir, templates } = workerData as Options
const post = (reply: Reply, transfer: ReadonlyArray<ArrayBuffer> = []) => port.postMessage(reply, [...transfer])

/** One array of its own (the whole of its buffer, which is transferred, not copied). */
const concat = (chunks: ReadonlyArray<Uint8Array>) => {
  const all = new Uint8Array(chunks.reduce((total, chunk) => total + chunk.length, 0))
  let offset = 0
  for (const chunk of chunks) {
    all.set(chunk, offset)
    offset += chunk.length
  }
  return all
}

const open = async () => {
  const artifacts = await PgliteArtifacts.prefetch()
  if (templates !== undefined) await PgliteTemplate.initialise(dataDir, templates, { ...artifacts })
  return PGlite.create(dataDir, { ...artifacts })
}

try {
  const db = await open()
  const backend = inProcess(db)
  port.on("message", async (request: Request) => {
    try {
      if (request.type === "run") {
        const chunks: Array<Uint8Array> = []
        await backend.run(request.messages, (chunk) => chunks.push(chunk.slice()))
        const data = chunks.length === 1 ? chunks[0]! : concat(chunks)
        post({ type: "done", id: request.id, data }, [data.buffer as ArrayBuffer])
      } else if (request.type === "rollback") {
        await backend.rollbackOpenTransaction()
        post({ type: "done", id: request.id })
      } else {
        await db.close()
        post({ type: "done", id: request.id })
        port.close()
      }
    } catch (error) {
      post({ type: "done", id: request.id, error: error instanceof Error ? error.message : String(error) })
    }
  })
  post({ type: "opened" })
} catch (error) {
  post({ type: "failed", message: error instanceof Error ? error.stack ?? error.message : String(error) })
}
