/**
 * The operator's audit trail of a file, whatever its workspace (`cli audit --file <cid>`): the CID's own streams on
 * both networks (uploads, releases, signatures) and the stream of every file that holds it (upload, updates,
 * delete), merged in log order. A file id is taken too, for the one file. Unknown to the log: `File not found`.
 */
import { CidRecord, File } from "@cairn/domain"
import { EventStore } from "@cairn/event-store"
import { Effect } from "effect"
import { historyOf } from "../History.ts"

export const fileAuditTrail = (cidOrFileId: string) =>
  Effect.gen(function*() {
    const store = yield* EventStore
    const [publicCid, privateCid, ownFile] = yield* Effect.all([
      store.readStream(CidRecord.stream("public", cidOrFileId)),
      store.readStream(CidRecord.stream("private", cidOrFileId)),
      store.readStream(File.stream(cidOrFileId))
    ], { concurrency: "unbounded" })
    const cidEvents = [...publicCid, ...privateCid]
    const fileIds = new Set<string>()
    for (const event of cidEvents) {
      const fileId = (event.data as { fileId?: unknown }).fileId
      if (typeof fileId === "string") fileIds.add(fileId)
    }
    const files = yield* Effect.forEach([...fileIds], (fileId) => store.readStream(File.stream(fileId)), { concurrency: 8 })
    const events = [...cidEvents, ...ownFile, ...files.flat()]
    if (events.length === 0) return yield* new File.FileNotFound({ fileId: cidOrFileId })
    return historyOf(events)
  })
