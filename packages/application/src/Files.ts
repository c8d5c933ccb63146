/**
 * Files: upload (content into the store, then the file and its CID record in one append), list with filters and
 * keyset pagination, get, update and delete. Every query is scoped to the caller's workspace and network.
 */
import { ContentStore } from "@cairn/content-store"
import { CidRecord, File, type Network, ValidationFailed } from "@cairn/domain"
import { EventStore, ExpectedVersion } from "@cairn/event-store"
import { Context, Effect, Layer, Option, type Stream } from "effect"
import { SqlClient } from "effect/sql"
import type { Principal } from "./Access.ts"
import { encoder, load, now } from "./EventCodec.ts"

export interface FileView {
  readonly id: string
  readonly name: string
  readonly cid: string
  readonly size: number
  readonly numberOfFiles: number
  readonly mimeType: string
  readonly keyvalues: File.KeyValues
  readonly groupId: string | null
  readonly createdAt: string
  readonly network: Network
  readonly userId: string
}

export interface Upload {
  readonly network: Network
  readonly name: string
  readonly mimeType: string
  readonly groupId: string | null
  readonly keyvalues: File.KeyValues
  readonly cidVersion: 0 | 1
  readonly content: Stream.Stream<Uint8Array, unknown>
}

export interface ListQuery {
  readonly name?: string
  readonly cid?: string
  readonly mimeType?: string
  /** A group id, or null for files in no group. */
  readonly group?: string | null
  readonly keyvalues?: File.KeyValues
  readonly order: "ASC" | "DESC"
  readonly limit: number
  readonly pageToken?: string
}

interface FileRow {
  readonly id: string
  readonly name: string
  readonly cid: string
  readonly size: bigint
  readonly number_of_files: number
  readonly mime_type: string
  readonly keyvalues: File.KeyValues
  readonly group_id: string | null
  readonly created_at: Date
  readonly network: Network
  readonly user_id: string
}

const toView = (row: FileRow): FileView => ({
  id: row.id,
  name: row.name,
  cid: row.cid,
  size: Number(row.size),
  numberOfFiles: row.number_of_files,
  mimeType: row.mime_type,
  keyvalues: row.keyvalues,
  groupId: row.group_id,
  createdAt: row.created_at.toISOString(),
  network: row.network,
  userId: row.user_id
})

/** Page tokens are opaque to clients: the (created_at, id) of the last row of the previous page. */
// The token's JSON is ASCII (an ISO date and a UUID), so btoa/atob suffice and work on every runtime.
const encodeToken = (row: FileRow) =>
  btoa(JSON.stringify([row.created_at.toISOString(), row.id])).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "")
const decodeToken = (token: string): Option.Option<readonly [string, string]> => {
  try {
    const value: unknown = JSON.parse(atob(token.replace(/-/g, "+").replace(/_/g, "/")))
    return Array.isArray(value) && value.length === 2 && typeof value[0] === "string" && typeof value[1] === "string" &&
        !Number.isNaN(Date.parse(value[0]))
      ? Option.some([value[0], value[1]] as const)
      : Option.none()
  } catch {
    return Option.none()
  }
}

const encodeFile = encoder(File.FileEvent)
const encodeCid = encoder(CidRecord.CidEvent)
const columns = "id, name, cid, size, number_of_files, mime_type, keyvalues, group_id, created_at, network, user_id"

export class Files extends Context.Service<Files>()("cairn/Files", {
  make: Effect.gen(function*() {
    const store = yield* EventStore
    const sql = yield* SqlClient.SqlClient
    const content = yield* ContentStore

    const upload = Effect.fn("Files.upload")(function*(principal: Principal, input: Upload) {
      const added = yield* content.add(input.content, { network: input.network, cidVersion: input.cidVersion })
      const fileId = crypto.randomUUID()
      const at = yield* now
      const uploaded = new File.FileUploaded({
        fileId,
        workspaceId: principal.workspaceId,
        userId: principal.userId,
        network: input.network,
        cid: added.cid,
        name: input.name,
        size: added.size,
        mimeType: input.mimeType,
        groupId: input.groupId,
        keyvalues: input.keyvalues,
        numberOfFiles: 1,
        at
      })
      const metadata = { actor: principal.userId }
      yield* store.append([
        { stream: File.stream(fileId), expected: ExpectedVersion.NoStream, events: [encodeFile(uploaded, metadata)] },
        {
          stream: CidRecord.stream(input.network, added.cid),
          expected: ExpectedVersion.Any,
          events: [encodeCid(new CidRecord.CidUploaded({ cid: added.cid, network: input.network, workspaceId: principal.workspaceId, fileId, at }), metadata)]
        }
      ])
      return toView({
        id: fileId,
        name: input.name,
        cid: added.cid,
        size: BigInt(added.size),
        number_of_files: 1,
        mime_type: input.mimeType,
        keyvalues: input.keyvalues,
        group_id: input.groupId,
        created_at: new Date(at),
        network: input.network,
        user_id: principal.userId
      })
    })

    const list = Effect.fn("Files.list")(function*(principal: Principal, network: Network, query: ListQuery) {
      const after = query.pageToken === undefined || query.pageToken === ""
        ? Option.none<readonly [string, string]>()
        : decodeToken(query.pageToken)
      if (query.pageToken && Option.isNone(after)) return yield* new ValidationFailed({ detail: "pageToken is not a token this service issued" })
      const conditions = [
        sql`workspace_id = ${principal.workspaceId}`,
        sql`network = ${network}`,
        ...(query.name === undefined ? [] : [sql`name ILIKE ${"%" + query.name.replace(/[\\%_]/g, "\\$&") + "%"}`]),
        ...(query.cid === undefined ? [] : [sql`cid = ${query.cid}`]),
        ...(query.mimeType === undefined ? [] : [sql`mime_type = ${query.mimeType}`]),
        ...(query.group === undefined ? [] : [query.group === null ? sql`group_id IS NULL` : sql`group_id = ${query.group}`]),
        ...(query.keyvalues === undefined || Object.keys(query.keyvalues).length === 0 ? [] : [sql`keyvalues @> ${JSON.stringify(query.keyvalues)}::jsonb`]),
        ...Option.match(after, {
          onNone: () => [],
          onSome: ([createdAt, id]) =>
            query.order === "ASC"
              ? [sql`(created_at, id) > (${createdAt}::timestamptz, ${id})`]
              : [sql`(created_at, id) < (${createdAt}::timestamptz, ${id})`]
        })
      ]
      const direction = sql.literal(query.order === "ASC" ? "ASC" : "DESC")
      const rows = yield* sql<FileRow>`SELECT ${sql.literal(columns)} FROM cairn_files WHERE ${sql.and(conditions)}
        ORDER BY created_at ${direction}, id ${direction} LIMIT ${query.limit + 1}`.pipe(Effect.orDie)
      const page = rows.slice(0, query.limit)
      return {
        files: page.map(toView),
        nextPageToken: rows.length > query.limit ? encodeToken(page[page.length - 1]!) : ""
      }
    })

    const get = (principal: Principal, network: Network, fileId: string) =>
      sql<FileRow>`SELECT ${sql.literal(columns)} FROM cairn_files
        WHERE id = ${fileId} AND workspace_id = ${principal.workspaceId} AND network = ${network}`.pipe(
        Effect.orDie,
        Effect.flatMap(([row]) => row === undefined ? Effect.fail(new File.FileNotFound({ fileId })) : Effect.succeed(toView(row)))
      )

    const update = Effect.fn("Files.update")(function*(
      principal: Principal,
      network: Network,
      fileId: string,
      change: { readonly name?: string; readonly keyvalues?: File.KeyValues }
    ) {
      const { state, version } = yield* load(store, File.stream(fileId), File.FileEvent, File.initial, File.evolve)
      const at = yield* now
      const events = yield* Effect.fromResult(File.update(state, { workspaceId: principal.workspaceId, network }, { fileId, ...change, at }))
      yield* store.append([{ stream: File.stream(fileId), expected: ExpectedVersion.Exact(version), events: events.map((e) => encodeFile(e, { actor: principal.userId })) }])
      return yield* get(principal, network, fileId)
    })

    const remove = Effect.fn("Files.remove")(function*(principal: Principal, network: Network, fileId: string) {
      const { state, version } = yield* load(store, File.stream(fileId), File.FileEvent, File.initial, File.evolve)
      const at = yield* now
      const { events, file } = yield* Effect.fromResult(File.remove(state, { workspaceId: principal.workspaceId, network }, fileId, at))
      const metadata = { actor: principal.userId }
      yield* store.append([
        { stream: File.stream(fileId), expected: ExpectedVersion.Exact(version), events: events.map((e) => encodeFile(e, metadata)) },
        {
          stream: CidRecord.stream(network, file.cid),
          expected: ExpectedVersion.Any,
          events: [encodeCid(new CidRecord.CidReleased({ cid: file.cid, network, workspaceId: principal.workspaceId, fileId, at }), metadata)]
        }
      ])
    })

    /** Whether any workspace holds a live file of this CID on the public network: what the gateway may serve. */
    const isPublic = (cid: string) =>
      sql<{ found: number }>`SELECT 1 AS found FROM cairn_files WHERE network = 'public' AND cid = ${cid} LIMIT 1`.pipe(
        Effect.orDie,
        Effect.map((rows) => rows.length > 0)
      )

    return { upload, list, get, update, remove, isPublic }
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
