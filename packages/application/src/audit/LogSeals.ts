/**
 * The sealer (issue 37, decision 0053, docs/audit-proofs.md): follows the log in its order and seals what is new as
 * numbered blocks, each event hashed and chained to its stream's previous one, each block a Merkle root over those
 * hashes, chained to the block before and signed with the installation's key. Sealing follows the log instead of
 * running inside appends: a hash over the position columns needs them final, which they are only once the log's
 * order is, and the append path stays as it was measured (`bench:store`).
 *
 * In a cluster every node runs it; a block number is taken once (its primary key), and a node that lost the race
 * reads where the other got to and goes on from there.
 */
import { compare, EventStore, type EventStoreUnavailable, type LogPosition, parsePosition, type RecordedEvent, start } from "@cairn/event-store"
import { TokenSigner } from "@cairn/auth"
import { Context, Duration, Effect, Fiber, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { now } from "../Now.ts"
import { createTogether } from "../SchemaSetup.ts"
import * as LogProof from "./LogProof.ts"

/** At most this many events in a block: what one exported seal carries as leaves. */
export const maxBlockEvents = 1000

/** How long the sealer waits between rounds: the most an edit can go unsealed (a test sets it shorter). */
export const SealInterval = Context.Reference<Duration.Duration>("cairn/SealInterval", { defaultValue: () => Duration.millis(500) })

/**
 * A block as stored, in one row: its header and signature, and for each of its events (in log order) its global
 * position, its hash (a leaf) and the hash it chains from.
 */
export interface Seal {
  readonly header: LogProof.BlockHeader
  readonly signature: string
  readonly leaves: ReadonlyArray<LogProof.Hash>
  readonly prevs: ReadonlyArray<LogProof.Hash>
  readonly positions: ReadonlyArray<bigint>
  /** What the header's hash was stored as (the next block's `prev` names it too). */
  readonly hash: string
  /** `leaves` and `prevs` as stored, in hex (64 digits each): what an export writes. */
  readonly leavesHex: string
  readonly prevsHex: string
}

/** An event as an export reads it: its position as text, its JSON as the export writes it (UTF-8 bytes). */
export interface ExportRow {
  readonly global_position: string
  readonly transaction_id: string
  readonly stream_id: string
  readonly recorded_at: Date
  /** The `workspaceId` its data names, when it names one as a string. */
  readonly workspace_id: string | null
  /** Whether its data may hold a sealed value (its JSON has a key or string `"sealed"`). */
  readonly sealed: boolean
  /** `{"position":…,"stream":…,"version":…,"eventId":…,"type":…,"data":…,"metadata":…,"recordedAt":…}` */
  readonly json: Uint8Array
}

interface SealRow {
  readonly block: string | number | bigint
  readonly prev: string
  readonly after: string
  readonly last: string
  readonly count: number
  readonly root: string
  readonly hash: string
  readonly leaves: string
  readonly prevs: string
  readonly positions: ReadonlyArray<string | bigint>
  readonly signature: string
  readonly sealed_at: string
}

/**
 * 32-byte hashes stored end to end, read as hex: the driver hands `bytea` back as a view into its receive buffer,
 * which it reuses, so bytes read that way can change under a reader that keeps them.
 */
const hashesIn = (hex: string): Array<LogProof.Hash> => {
  const bytes = LogProof.fromHex(hex)
  const hashes: Array<LogProof.Hash> = []
  for (let i = 0; i + 32 <= bytes.length; i += 32) hashes.push(bytes.subarray(i, i + 32))
  return hashes
}

const joined = (hashes: ReadonlyArray<LogProof.Hash>): Uint8Array => {
  const bytes = new Uint8Array(32 * hashes.length)
  for (let i = 0; i < hashes.length; i++) bytes.set(hashes[i]!, 32 * i)
  return bytes
}

const sealOf = (row: SealRow): Seal => ({
    header: {
      v: 1,
      block: Number(row.block),
      prev: row.prev,
      after: row.after,
      last: row.last,
      count: Number(row.count),
      root: row.root,
      sealedAt: row.sealed_at
    },
    signature: row.signature,
    leaves: hashesIn(row.leaves),
    prevs: hashesIn(row.prevs),
    positions: row.positions.map(BigInt),
    hash: row.hash,
    leavesHex: row.leaves,
    prevsHex: row.prevs
})

const sealColumns = (sql: SqlClient.SqlClient) =>
  sql`block, encode(prev, 'hex') AS prev, after, last, count, encode(root, 'hex') AS root, encode(hash, 'hex') AS hash,
    encode(leaves, 'hex') AS leaves, encode(prevs, 'hex') AS prevs, positions::text[] AS positions, signature, sealed_at`

/** Where a position in a header points: `"0"` is the log's start. */
export const positionFrom = (text: string): LogPosition => parsePosition(text) ?? start

/** How many blocks `verify` and an export read with one statement. */
const blocksPerRead = 10

/** An export row's log position. */
export const exportRowPosition = (row: ExportRow): LogPosition => ({ transactionId: BigInt(row.transaction_id), globalPosition: BigInt(row.global_position) })

/**
 * Runs `step` on each of `units` in order with what `read` reads of it, the next one's read while `step` works on
 * this one (the database and this process at once); stops early when `step` says `true`.
 */
const readingAhead = <U, A, E, R, E2, R2>(
  units: ReadonlyArray<U>,
  read: (unit: U) => Effect.Effect<A, E2, R2>,
  step: (unit: U, read: A) => Effect.Effect<boolean, E, R>
): Effect.Effect<void, E | E2, R | R2> =>
  Effect.gen(function*() {
    let ahead = units.length === 0 ? undefined : yield* Effect.forkChild(read(units[0]!))
    for (let k = 0; k < units.length; k++) {
      const value = yield* Fiber.join(ahead!)
      if (k + 1 < units.length) ahead = yield* Effect.forkChild(read(units[k + 1]!))
      if (yield* step(units[k]!, value)) return
    }
  })

/** Streams whose last hash is held in memory, at most this many (then forgotten all at once, and read again). */
const maxCachedHeads = 100_000

export class LogSeals extends Context.Service<LogSeals>()("cairn/LogSeals", {
  make: Effect.gen(function*() {
    const store = yield* EventStore
    const sql = yield* SqlClient.SqlClient
    const signer = yield* TokenSigner
    // One row per block: what a block's events need to be checked (their positions, hashes and what each chains
    // from) is in it, so sealing writes one row, not one per event.
    yield* createTogether(sql, Effect.all([
      sql`CREATE TABLE IF NOT EXISTS cairn_log_seals (
        block bigint PRIMARY KEY, prev bytea NOT NULL, after text NOT NULL, last text NOT NULL,
        last_tx bigint NOT NULL, last_gp bigint NOT NULL, count integer NOT NULL, root bytea NOT NULL,
        hash bytea NOT NULL, leaves bytea NOT NULL, prevs bytea NOT NULL, positions bigint[] NOT NULL,
        signature text NOT NULL, sealed_at text NOT NULL)`,
      sql`CREATE UNIQUE INDEX IF NOT EXISTS cairn_log_seals_last ON cairn_log_seals (last_tx, last_gp)`,
      sql`CREATE TABLE IF NOT EXISTS cairn_log_chain (
        id boolean PRIMARY KEY DEFAULT true CHECK (id), introduced_at text NOT NULL, backfilled_through text)`,
      sql`CREATE TABLE IF NOT EXISTS cairn_log_sealer (
        id boolean PRIMARY KEY DEFAULT true CHECK (id), sealer text NOT NULL, lease_until timestamptz NOT NULL)`
    ], { discard: true })).pipe(Effect.orDie)

    // This process's sealer, for the lease: one process seals at a time, the others would only hash the same events
    // to lose the block number (which keeps it correct, not cheap). A stopped holder's lease runs out in seconds.
    const sealer = crypto.randomUUID()
    const holdsLease = sql<{ readonly sealer: string }>`INSERT INTO cairn_log_sealer (sealer, lease_until) VALUES (${sealer}, now() + interval '10 seconds')
      ON CONFLICT (id) DO UPDATE SET sealer = EXCLUDED.sealer, lease_until = EXCLUDED.lease_until
      WHERE cairn_log_sealer.sealer = EXCLUDED.sealer OR cairn_log_sealer.lease_until < now()
      RETURNING sealer`.pipe(Effect.orDie, Effect.map((rows) => rows.length > 0))

    /** Blocks `from` to `to` (inclusive), in order. */
    const seals = (from: number, to: number) =>
      sql<SealRow>`SELECT ${sealColumns(sql)} FROM cairn_log_seals WHERE block BETWEEN ${from} AND ${to} ORDER BY block`.pipe(
        Effect.orDie,
        Effect.map((rows) => rows.map(sealOf))
      )

    /** The blocks holding events after `position`, in order, `limit` at a time from block `from` on. */
    const sealsAfter = (position: LogPosition, from: number, limit: number) =>
      sql<SealRow>`SELECT ${sealColumns(sql)} FROM cairn_log_seals
        WHERE block >= ${from} AND (last_tx, last_gp) > (${position.transactionId.toString()}::int8, ${position.globalPosition.toString()}::int8)
        ORDER BY block LIMIT ${limit}`.pipe(Effect.orDie, Effect.map((rows) => rows.map(sealOf)))

    /**
     * The same events as an export writes them: each one's JSON (position, stream, version, eventId, type, data,
     * metadata, recordedAt) written by the database as UTF-8 bytes, which the export copies as they are (parsing
     * the events and writing them again was most of an export's time), and the workspace its data names.
     */
    const exportRowsOf = (after: LogPosition, limit: number) => {
      // Written with `||` rather than json_build_object (a third less of the database's time), the data as text once.
      return sql<ExportRow>`SELECT global_position::text AS global_position, transaction_id::text AS transaction_id, stream_id,
          recorded_at, CASE WHEN jsonb_typeof(e.data -> 'workspaceId') = 'string' THEN e.data ->> 'workspaceId' END AS workspace_id,
          strpos(text.data, '"sealed"') > 0 AS sealed,
          convert_to('{"position":"' || transaction_id::text || ':' || global_position || '","stream":' || to_json(stream_id) ||
            ',"version":' || version || ',"eventId":"' || event_id || '","type":' || to_json(type) || ',"data":' || text.data ||
            ',"metadata":' || e.metadata::text || ',"recordedAt":"' ||
            to_char(recorded_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '"}', 'UTF8') AS json
        FROM cairn_events AS e CROSS JOIN LATERAL (SELECT e.data::text AS data) AS text
        WHERE (transaction_id, global_position) > (${after.transactionId.toString()}::xid8, ${after.globalPosition})
          AND transaction_id < pg_snapshot_xmin(pg_current_snapshot())
        ORDER BY e.transaction_id, e.global_position
        LIMIT ${limit}`.pipe(
        Effect.orDie,
        // The driver hands `bytea` back as a view into a buffer it reuses: copied (into one buffer for the read)
        // before the next read.
        Effect.map((rows) => {
          let size = 0
          for (const row of rows) size += row.json.length
          const copy = new Uint8Array(size)
          let offset = 0
          return rows.map((row): ExportRow => {
            copy.set(row.json, offset)
            const json = copy.subarray(offset, offset += row.json.length)
            return { global_position: row.global_position, transaction_id: row.transaction_id, stream_id: row.stream_id,
              recorded_at: row.recorded_at, workspace_id: row.workspace_id, sealed: row.sealed, json }
          })
        })
      )
    }

    /**
     * Each block of `page` with its `count` events after its `after` (what `readAfter` would read of it alone), read
     * `blocksPerRead` blocks at a time with `readAfter` (one statement per block left the database and this process
     * waiting on each other), the next group's read while `step` works on this one. A block whose events run past
     * what its group read (a log edited since it was sealed) is read alone, so that each block sees exactly what a
     * read of its own would.
     */
    const inGroups = <T, E, R>(
      page: ReadonlyArray<Seal>,
      readAfter: (after: LogPosition, limit: number) => Effect.Effect<ReadonlyArray<T>, EventStoreUnavailable>,
      positionOf: (row: T) => LogPosition,
      step: (seal: Seal, rows: ReadonlyArray<T>) => Effect.Effect<boolean, E, R>
    ): Effect.Effect<void, E | EventStoreUnavailable, R> => {
      const groups: Array<ReadonlyArray<Seal>> = []
      for (let i = 0; i < page.length; i += blocksPerRead) groups.push(page.slice(i, i + blocksPerRead))
      const read = (group: ReadonlyArray<Seal>) =>
        readAfter(positionFrom(group[0]!.header.after), group.reduce((n, seal) => n + seal.header.count, 0))
      return readingAhead(groups, read, (group, rows) =>
        Effect.gen(function*() {
          let start = 0
          for (const seal of group) {
            const after = positionFrom(seal.header.after)
            while (start < rows.length && compare(positionOf(rows[start]!), after) <= 0) start++
            const end = start + seal.header.count
            const mine = end <= rows.length ? rows.slice(start, end) : yield* readAfter(after, seal.header.count)
            if (yield* step(seal, mine)) return true
          }
          return false
        }))
    }

    /** Each block of `page` with its events as the store reads them. */
    const withEvents = <E, R>(
      page: ReadonlyArray<Seal>,
      step: (seal: Seal, events: ReadonlyArray<RecordedEvent>) => Effect.Effect<boolean, E, R>
    ): Effect.Effect<void, E | EventStoreUnavailable, R> =>
      inGroups(page, (after, limit) => store.readAll({ after, limit }), (event) => event.position, step)

    /** Each block of `page` with its events as an export writes them. */
    const withExportRows = <E, R>(
      page: ReadonlyArray<Seal>,
      step: (seal: Seal, rows: ReadonlyArray<ExportRow>) => Effect.Effect<boolean, E, R>
    ): Effect.Effect<void, E | EventStoreUnavailable, R> => inGroups(page, exportRowsOf, exportRowPosition, step)

    const chainStart = sql<{ readonly introduced_at: string; readonly backfilled_through: string | null }>`
      SELECT introduced_at, backfilled_through FROM cairn_log_chain`.pipe(
      Effect.orDie,
      Effect.map(([row]) => Option.map(Option.fromNullishOr(row), (r) => ({ introducedAt: r.introduced_at, backfilledThrough: r.backfilled_through })))
    )

    const heads = new Map<string, LogProof.Hash>()
    /**
     * Each stream's last sealed hash, from memory, or else (after a restart) found as the leaf of the stream's last
     * sealed event in the block whose range holds it. That event is among the versions just before the first one to
     * seal: versions are in log order but for the few a writer's transaction id can put out of turn (decision 0048),
     * so a few around it are read and the latest one in log order at or before `sealedUpTo` is taken. A stream's
     * version 1 chains from ZERO: nothing of its stream can be sealed before it, since a version is inserted only
     * after the previous one committed, and every append's transaction takes its id with its first insert.
     */
    const headsOf = (firsts: ReadonlyArray<RecordedEvent>, sealedUpTo: LogPosition) =>
      Effect.gen(function*() {
        // Forgotten all at once when full, before choosing what to read, so that no stream of the block is left out.
        if (heads.size + firsts.length > maxCachedHeads) heads.clear()
        const missing = firsts.filter((event) => event.version > 1 && !heads.has(event.stream))
        if (missing.length === 0) return
        const before = yield* Effect.forEach(missing, (event) =>
          Effect.map(store.readStream(event.stream, { fromVersion: Math.max(1, event.version - 4), limit: 9 }), (around) => {
            let latest: RecordedEvent | undefined
            for (const candidate of around) {
              if (compare(candidate.position, sealedUpTo) > 0) continue
              if (latest === undefined || compare(candidate.position, latest.position) > 0) latest = candidate
            }
            return latest
          }), { concurrency: 4 })
        const found = before.filter((event): event is RecordedEvent => event !== undefined)
        if (found.length === 0) return
        const rows = yield* sql<{ readonly global_position: string | bigint; readonly hash: string }>`
          SELECT x.p AS global_position, encode(substring(s.leaves FROM (array_position(s.positions, x.p) - 1) * 32 + 1 FOR 32), 'hex') AS hash
            FROM unnest(${found.map((e) => e.position.transactionId.toString())}::int8[], ${found.map((e) => e.position.globalPosition.toString())}::int8[]) AS x(t, p)
            CROSS JOIN LATERAL (SELECT leaves, positions FROM cairn_log_seals s WHERE (s.last_tx, s.last_gp) >= (x.t, x.p)
              ORDER BY s.last_tx, s.last_gp LIMIT 1) s`.pipe(Effect.orDie)
        const byPosition = new Map(rows.map((row) => [BigInt(row.global_position), row.hash]))
        for (const event of found) {
          const hash = byPosition.get(event.position.globalPosition)
          if (hash !== undefined && hash.length === 64) heads.set(event.stream, LogProof.fromHex(hash))
        }
      })

    /** Records where the chain began, once: the first seal on a log that already had events hashes them after the fact. */
    const recordStart = (first: boolean, caughtUpAt: Option.Option<string>) =>
      Effect.gen(function*() {
        if (first) yield* sql`INSERT INTO cairn_log_chain (introduced_at) VALUES (${yield* now}) ON CONFLICT (id) DO NOTHING`.pipe(Effect.orDie)
        if (Option.isSome(caughtUpAt)) {
          yield* sql`UPDATE cairn_log_chain SET backfilled_through = ${caughtUpAt.value} WHERE backfilled_through IS NULL`.pipe(Effect.orDie)
        }
      })

    /** Where the next block starts: the last one's number, hash and last position (not its leaves). */
    const tipOf = sql<{ readonly block: string | number; readonly hash: string; readonly last: string }>`
      SELECT block, encode(hash, 'hex') AS hash, last FROM cairn_log_seals ORDER BY block DESC LIMIT 1`.pipe(
      Effect.orDie,
      Effect.map(([row]) => Option.map(Option.fromNullishOr(row), (r) => ({ block: Number(r.block), hash: r.hash, last: r.last })))
    )

    /** The hash of the block this sealer wrote last: the one its `heads` are current for. */
    let headsAfter: string | undefined
    /** Whether this process has seen `cairn_log_chain`'s backfill recorded (so idle rounds write nothing). */
    let backfillRecorded = false
    const caughtUp = (at: string) =>
      backfillRecorded ? Effect.void : Effect.andThen(recordStart(false, Option.some(at)), Effect.sync(() => void (backfillRecorded = true)))

    /**
     * Seals the events recorded since the last block as the next block: the number of events sealed (0 when there
     * were none, or when another node took the block number first).
     */
    const sealNext = Effect.gen(function*() {
      const tip = yield* tipOf
      // Another node sealed since (or the seals were emptied): what this one remembers may be behind the stored heads.
      if (Option.getOrUndefined(tip)?.hash !== headsAfter) heads.clear()
      const after = Option.match(tip, { onNone: () => start, onSome: (seal) => positionFrom(seal.last) })
      const events = yield* store.readAll({ after, limit: maxBlockEvents })
      if (Option.isNone(tip)) yield* recordStart(true, Option.none())
      if (events.length === 0) {
        yield* caughtUp(LogProof.positionText(after))
        return 0
      }
      const firsts = new Map<string, RecordedEvent>()
      for (const event of events) if (!firsts.has(event.stream)) firsts.set(event.stream, event)
      yield* headsOf([...firsts.values()], after)
      const { leaves, prevs, newHeads } = hashAll(events, heads)
      const header: LogProof.BlockHeader = {
        v: 1,
        block: Option.match(tip, { onNone: () => 1, onSome: (seal) => seal.block + 1 }),
        prev: Option.match(tip, { onNone: () => LogProof.toHex(LogProof.ZERO), onSome: (seal) => seal.hash }),
        after: LogProof.positionText(after),
        last: LogProof.positionText(events[events.length - 1]!.position),
        count: events.length,
        root: LogProof.toHex(LogProof.merkleRoot(leaves)),
        sealedAt: yield* now
      }
      const signature = yield* signer.signSeal(LogProof.headerText(header))
      const hash = LogProof.toHex(LogProof.blockHash(header))
      const last = events[events.length - 1]!.position
      const written = yield* sql`INSERT INTO cairn_log_seals
          (block, prev, after, last, last_tx, last_gp, count, root, hash, leaves, prevs, positions, signature, sealed_at)
        VALUES (${header.block}, decode(${header.prev}, 'hex'), ${header.after}, ${header.last}, ${last.transactionId.toString()}::int8,
          ${last.globalPosition.toString()}::int8, ${header.count}, decode(${header.root}, 'hex'),
          decode(${hash}, 'hex'), ${joined(leaves)}::bytea, ${joined(prevs)}::bytea,
          ${events.map((event) => event.position.globalPosition.toString())}::int8[],
          ${signature}, ${header.sealedAt})
        ON CONFLICT DO NOTHING RETURNING block`.pipe(Effect.orDie, Effect.map((rows) => rows.length > 0))
      if (!written) {
        // Another node sealed this block: what the next one chains from is in its row, not in this node's memory.
        heads.clear()
        return 0
      }
      for (const [stream, hash] of newHeads) heads.set(stream, hash)
      headsAfter = hash
      // A block short of full is the log caught up: on the first such, what the chain was introduced over is known.
      if (events.length < maxBlockEvents) yield* caughtUp(header.last)
      return events.length
    })

    /** Seals until the log is caught up: how many events that took. */
    const sealPending = Effect.gen(function*() {
      let total = 0
      for (;;) {
        const sealed = yield* sealNext
        total += sealed
        if (sealed < maxBlockEvents) return total
      }
    })

    /** Seals block after block until the log is caught up, each while this process still holds the lease. */
    const sealWhileHeld = Effect.gen(function*() {
      while ((yield* holdsLease) && (yield* sealNext) === maxBlockEvents) { /* a full block: more may wait */ }
    })

    /**
     * The sealer, for as long as the server runs: a round every `SealInterval`, sooner after an append here, while
     * this process holds the lease (renewed each round; another node's, once it has stopped, runs out in 10 s).
     */
    const run = Effect.gen(function*() {
      const interval = yield* SealInterval
      for (;;) {
        const seen = yield* store.appendCount
        yield* sealWhileHeld.pipe(Effect.catchCause((cause) => Effect.logError("Sealing the log failed; trying again", cause)))
        yield* Effect.sleep(interval)
        yield* store.awaitAppend(seen, Duration.toMillis(interval) * 4)
      }
    })

    return { seals, sealsAfter, withEvents, withExportRows, chainStart, sealPending, run }
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}

/** Each event's hash chained from its stream's last (`heads`, not changed), and the heads after them. */
export const hashAll = (events: ReadonlyArray<RecordedEvent>, heads: ReadonlyMap<string, LogProof.Hash>) => {
  const newHeads = new Map<string, LogProof.Hash>()
  const leaves: Array<LogProof.Hash> = []
  const prevs: Array<LogProof.Hash> = []
  for (const event of events) {
    const prev = newHeads.get(event.stream) ?? heads.get(event.stream) ?? LogProof.ZERO
    const hash = LogProof.eventHash(prev, event)
    newHeads.set(event.stream, hash)
    leaves.push(hash)
    prevs.push(prev)
  }
  return { leaves, prevs, newHeads }
}
