/**
 * Workspace snapshots: an agent's workspace stored in the SnapshotStore as one UnixFS directory CID, on demand
 * (`manual`), every SNAPSHOT_INTERVAL while the agent runs and its workspace changed (`auto`), and before every reset
 * (`pre-reset`, so each reset can be undone). Consecutive snapshots share every unchanged file's blocks: a file whose
 * fingerprint (size, times, inode) is the one the last snapshot saw is named by the CID it had, neither read nor
 * hashed again (the fingerprints are this node's cache; after a restart the first snapshot reads everything once).
 *
 * A snapshot is listed only once its whole tree is stored: the event is appended last, so a crash mid-sync leaves
 * unreferenced blocks for garbage collection and nothing half-listed. None is stored while the data directory's disk
 * is below its reserve, counting the bytes of the files to be read (507 Insufficient storage, DiskReserve.ts).
 * Retention is decided with each snapshot; garbage collection then removes blocks no kept snapshot reaches, while no
 * import is under way.
 */
import { AgentEngine, type RestoreEntry, type WorkspaceEntry } from "@cairn/agent-engine"
import { type ContentStoreUnavailable, SnapshotStore, type TreeDiff, type TreeEntry, type TreeListing } from "@cairn/content-store"
import { Snapshot, ValidationFailed } from "@cairn/domain"
import { Context, Effect, Layer, Option, Result, Semaphore, Stream } from "effect"
import { SqlClient } from "effect/sql"
import type { Principal } from "../Access.ts"
import { Gateway } from "../gateway/Gateway.ts"
import { CommandHandler, decision } from "../CommandHandler.ts"
import { DiskReserve } from "../DiskReserve.ts"
import { now } from "../Now.ts"
import { AgentsTable, SnapshotsTable } from "../readmodels/index.ts"
import { SnapshotSettings } from "./SnapshotSettings.ts"
import { tarGz } from "./SnapshotTar.ts"

/** What this node knows of the tree an agent's last snapshot stored: each file's fingerprint, CID and size. */
interface Index {
  readonly cid: string
  readonly files: ReadonlyMap<string, { readonly fingerprint: string | undefined; readonly cid: string; readonly size: number }>
}

/** What a sync gives back: the snapshot the workspace is now, and whether it was recorded as a new one. */
export interface SyncOutcome {
  readonly snapshotCid: string
  readonly lastSync: string
  readonly changeSummary: Snapshot.ChangeSummary
  readonly recorded: boolean
}

/** How a snapshot differs from the one it is compared with (`against`): see SnapshotStore's TreeDiff. */
export interface SnapshotDiff extends TreeDiff {
  readonly snapshotCid: string
  readonly against: string
}

/** A snapshot as an archive: its bytes as they are read, what they are, and the name to save them under. */
export interface SnapshotExport {
  readonly snapshotCid: string
  readonly format: Snapshot.ExportFormat
  readonly contentType: string
  readonly filename: string
  readonly content: Stream.Stream<Uint8Array, unknown>
}

export interface ResetOutcome {
  readonly snapshotCid: string
  readonly preResetCid: string
}

/** A symlink counts as a file in change summaries, named by its target. */
const symlinkKey = (target: string) => `symlink:${target}`

/** Files (and symlinks) of a stored tree, by path, for change summaries. */
const filesOf = (listing: ReadonlyArray<TreeListing>): Map<string, Snapshot.SnapshotFile> =>
  new Map(listing.flatMap((entry) =>
    entry.kind === "file" ? [[entry.path, { cid: entry.cid, size: entry.size }] as const]
      : entry.kind === "symlink" ? [[entry.path, { cid: symlinkKey(entry.target ?? ""), size: 0 }] as const]
      : []
  ))

const pageLimit = (raw: string | null): Result.Result<number, ValidationFailed> => {
  if (raw === null || raw === "") return Result.succeed(20)
  const limit = Number(raw)
  return Number.isInteger(limit) && limit >= 1 && limit <= 100
    ? Result.succeed(limit)
    : Result.fail(new ValidationFailed({ detail: "limit must be a whole number from 1 to 100" }))
}

const pageCursor = (raw: string | null): Result.Result<number | undefined, ValidationFailed> => {
  if (raw === null || raw === "") return Result.succeed(undefined)
  const cursor = Number(raw)
  return /^[1-9][0-9]{0,9}$/.test(raw) && Number.isSafeInteger(cursor)
    ? Result.succeed(cursor)
    : Result.fail(new ValidationFailed({ detail: "pageToken is not a token this service issued" }))
}

export class Snapshots extends Context.Service<Snapshots>()("cairn/Snapshots", {
  make: Effect.gen(function*() {
    const commands = yield* CommandHandler
    const engine = yield* AgentEngine
    const store = yield* SnapshotStore
    const agents = AgentsTable.queries(yield* SqlClient.SqlClient)
    const gateway = yield* Gateway
    const settings = yield* SnapshotSettings
    const reserve = yield* DiskReserve
    const sql = yield* SqlClient.SqlClient
    const table = SnapshotsTable.queries(sql)
    const agentsTable = AgentsTable.queries(sql)
    const excluded = Snapshot.matcher(settings.exclude)

    const indexes = new Map<string, Index>()
    /** Whether snapshots expired since the last garbage collection (else there is nothing new to collect). */
    let expiredSinceCollection = false

    // Syncs and resets of one agent take turns: each reads the workspace the previous one left.
    const agentLocks = new Map<string, Semaphore.Semaphore>()
    const oneAtATime = (agentId: string) => {
      let lock = agentLocks.get(agentId)
      if (lock === undefined) agentLocks.set(agentId, lock = Semaphore.makeUnsafe(1))
      return Semaphore.withPermit(lock)
    }
    // Imports share the store; garbage collection takes it whole, since blocks being imported are not yet
    // reachable from any recorded snapshot.
    const allPermits = 1_000_000
    const storeUse = Semaphore.makeUnsafe(allPermits)
    const importing = storeUse.withPermits(1)
    const collecting = storeUse.withPermits(allPermits)

    const unavailable = (operation: string) => (error: ContentStoreUnavailable) =>
      Effect.logWarning(`Snapshot store ${operation} failed`, error.cause).pipe(
        Effect.andThen(Effect.fail(new Snapshot.SnapshotStorageUnavailable({ operation })))
      )

    const enabled = settings.enabled ? Effect.void : Effect.fail(new Snapshot.StorageNotConfigured())

    /** The agent's snapshot history from the read model, without folding its (long) stream; see SnapshotsTable. */
    const history = (agentId: string) => table.history(agentId)

    /** Decides a command on the history as the read model has it (the stream is folded only after a conflict). */
    const record = (agentId: string, command: Snapshot.SnapshotCommand, actor: string) =>
      Effect.flatMap(history(agentId), (loaded) => commands.execute(Snapshot.decider, Snapshot.stream(agentId), command, { actor }, loaded))

    /** The files of the agent's latest kept snapshot: from this node's index when it describes it, else the store. */
    const latestFiles = (agentId: string, latestCid: string | undefined) =>
      Effect.gen(function*() {
        if (latestCid === undefined) return new Map<string, Snapshot.SnapshotFile>()
        const index = indexes.get(agentId)
        if (index?.cid === latestCid) return new Map([...index.files].map(([path, file]) => [path, { cid: file.cid, size: file.size }]))
        return filesOf(yield* store.readTree(latestCid))
      })

    /** The CID a scanned file had at the last snapshot, when its fingerprint says it is unchanged since. */
    const unchangedCid = (entry: WorkspaceEntry, index: Index | undefined) => {
      const known = index?.files.get(entry.path)
      return entry.fingerprint !== undefined && known?.fingerprint === entry.fingerprint ? known.cid : undefined
    }

    /** The workspace as tree entries: unchanged files by the CID they had, the rest read from the engine. */
    const treeOf = (agentId: string, scan: ReadonlyArray<WorkspaceEntry>, index: Index | undefined): ReadonlyArray<TreeEntry> =>
      scan.map((entry): TreeEntry => {
        switch (entry.kind) {
          case "directory":
            return { path: entry.path, kind: "directory", mode: entry.mode }
          case "symlink":
            return { path: entry.path, kind: "symlink", target: entry.target ?? "" }
          case "file": {
            const cid = unchangedCid(entry, index)
            return {
              path: entry.path,
              kind: "file",
              mode: entry.mode,
              source: cid !== undefined ? { cid } : { content: engine.readWorkspaceEntry(agentId, entry.path) }
            }
          }
        }
      })

    /** The most a snapshot of the scan can add to the store: the bytes of the files it reads (not known unchanged). */
    const bytesToRead = (scan: ReadonlyArray<WorkspaceEntry>, index: Index | undefined) =>
      scan.reduce((total, entry) => entry.kind === "file" && unchangedCid(entry, index) === undefined ? total + entry.size : total, 0)

    /** Stores the workspace and records it as the agent's next snapshot (unless it repeats the latest). Locked. */
    const take = (agentId: string, workspaceId: string, trigger: Snapshot.Trigger, actor: string) =>
      Effect.gen(function*() {
        const syncFailed = new Snapshot.SyncFailed({ agentId })
        const scan = yield* engine.scanWorkspace(agentId, { exclude: excluded }).pipe(
          Effect.tapError((error) => Effect.logWarning(`Agent ${agentId}: workspace scan failed`, error)),
          Effect.mapError(() => syncFailed)
        )
        yield* reserve.ensureRoom(bytesToRead(scan, indexes.get(agentId)))
        const { outcome, index } = yield* Effect.gen(function*() {
          const stored = yield* store.importTree(treeOf(agentId, scan, indexes.get(agentId))).pipe(
            Effect.catchTags({
              ContentStoreUnavailable: unavailable("import"),
              TreeSourceFailed: (error) =>
                Effect.logWarning(`Agent ${agentId}: ${error.message}`, error.cause).pipe(Effect.andThen(Effect.fail(syncFailed))),
              InvalidDirectoryPath: (error) => Effect.logError(`Agent ${agentId}: ${error.message}`).pipe(Effect.andThen(Effect.fail(syncFailed)))
            })
          )
          const files = new Map<string, Snapshot.SnapshotFile>()
          const indexed = new Map<string, { fingerprint: string | undefined; cid: string; size: number }>()
          for (const entry of scan) {
            if (entry.kind === "symlink") files.set(entry.path, { cid: symlinkKey(entry.target ?? ""), size: 0 })
            if (entry.kind !== "file") continue
            const cid = stored.files.get(entry.path)
            if (cid === undefined) continue
            files.set(entry.path, { cid, size: entry.size })
            indexed.set(entry.path, { fingerprint: entry.fingerprint, cid, size: entry.size })
          }
          const loaded = yield* history(agentId)
          const latest = Snapshot.latest(loaded.state)
          const previous = yield* latestFiles(agentId, latest?.cid).pipe(
            // A latest snapshot whose blocks are gone: summarize against nothing rather than fail the sync.
            Effect.catchTags({ ContentNotFound: () => Effect.succeed(new Map()), NotADirectory: () => Effect.succeed(new Map()) }),
            Effect.catchTag("ContentStoreUnavailable", unavailable("read"))
          )
          const changeSummary = Snapshot.changeSummary(previous, files)
          const at = yield* now
          const { events, state } = yield* commands.execute(Snapshot.decider, Snapshot.stream(agentId), new Snapshot.RecordSnapshot({
            agentId,
            workspaceId,
            snapshotCid: stored.cid,
            trigger,
            changeSummary,
            files: files.size,
            bytes: [...files.values()].reduce((total, file) => total + file.size, 0),
            keep: settings.keep,
            at
          }), { actor }, loaded)
          const outcome: SyncOutcome = {
            snapshotCid: stored.cid,
            lastSync: state.lastSync ?? at,
            changeSummary: events.length === 0 ? { added: 0, modified: 0, deleted: 0, bytesAdded: 0 } : changeSummary,
            recorded: events.length > 0
          }
          if (events.some((event) => event._tag === "SnapshotsExpired")) expiredSinceCollection = true
          return { outcome, index: { cid: stored.cid, files: indexed } satisfies Index }
        }).pipe(importing)
        indexes.set(agentId, index)
        return outcome
      })

    /** The agent, if the caller's workspace has it, and snapshots are on. */
    const visible = (principal: Principal, agentId: string) =>
      agents.visibleIn(principal.workspaceId, agentId).pipe(Effect.tap(() => enabled))

    const sync = Effect.fn("Snapshots.sync")(function*(principal: Principal, agentId: string) {
      const agent = yield* visible(principal, agentId)
      return yield* take(agentId, agent.workspaceId, "manual", principal.userId).pipe(oneAtATime(agentId))
    })

    /**
     * The workspace as it is, snapshotted before the agent is deleted (an `auto` snapshot, kept for the deleted
     * agents' grace period like the others). Best effort: snapshots off or failing never block a delete.
     */
    const beforeDelete = (principal: Principal, agentId: string) =>
      Effect.gen(function*() {
        if (!settings.enabled) return
        const agent = yield* agents.visibleIn(principal.workspaceId, agentId)
        yield* take(agentId, agent.workspaceId, "auto", principal.userId).pipe(oneAtATime(agentId))
      }).pipe(Effect.catchTag("AgentNotFound", () => Effect.void), Effect.catchCause((cause) => Effect.logWarning(`Agent ${agentId}: no snapshot before its deletion`, cause)))

    /**
     * The workspace of an agent put to sleep, its gateway stopped (a `sleep` snapshot, kept like an `auto` one): what a
     * wake on another node restores. None when snapshots are off or the snapshot failed (logged): the home stays on
     * this node all the same.
     */
    const beforeSleep = (agentId: string, workspaceId: string): Effect.Effect<Option.Option<string>> =>
      settings.enabled
        ? take(agentId, workspaceId, "sleep", "supervisor").pipe(
          oneAtATime(agentId),
          Effect.map((taken) => Option.some(taken.snapshotCid)),
          Effect.catchCause((cause) => Effect.as(Effect.logWarning(`Agent ${agentId}: no snapshot as it fell asleep`, cause), Option.none()))
        )
        : Effect.succeed(Option.none())

    const status = Effect.fn("Snapshots.status")(function*(principal: Principal, agentId: string) {
      yield* agents.visibleIn(principal.workspaceId, agentId)
      const { state } = yield* history(agentId)
      const lastSync = state.lastSync ?? null
      return {
        agentId,
        configured: settings.enabled,
        lastSync,
        message: !settings.enabled
          ? "Snapshot storage is not configured on this server"
          : lastSync === null
          ? "No snapshot yet"
          : `Last snapshot ${Snapshot.latest(state)?.cid ?? ""} at ${lastSync}`
      }
    })

    const list = Effect.fn("Snapshots.list")(function*(principal: Principal, agentId: string, limit: string | null, pageToken: string | null) {
      yield* visible(principal, agentId)
      const size = yield* Effect.fromResult(pageLimit(limit))
      const before = yield* Effect.fromResult(pageCursor(pageToken))
      const page = yield* table.page(agentId, size, before)
      return { agentId, snapshots: page.snapshots, ...(page.nextCursor === undefined ? {} : { nextPageToken: page.nextCursor }) }
    })

    /**
     * One of the agent's kept snapshots, named in a path: another agent's (or workspace's) snapshot is not found,
     * whatever its CID, so nothing of it is ever read for this caller.
     */
    const keptSnapshot = (agentId: string, snapshotCid: string) =>
      Effect.flatMap(history(agentId), ({ state }) => {
        const kept = state.kept.find((snapshot) => snapshot.cid === snapshotCid)
        return kept === undefined ? Effect.fail(new Snapshot.SnapshotNotFound({ snapshotCid })) : Effect.succeed(kept)
      })

    /** A kept snapshot whose blocks the store lacks (or that is no directory) cannot be served: not found, logged. */
    const unreadable = (agentId: string, snapshotCid: string) => (error: { readonly _tag: string }) =>
      Effect.logWarning(`Agent ${agentId}: snapshot ${snapshotCid} cannot be read (${error._tag})`).pipe(
        Effect.andThen(Effect.fail(new Snapshot.SnapshotNotFound({ snapshotCid })))
      )

    const diff = Effect.fn("Snapshots.diff")(function*(principal: Principal, agentId: string, cid: string, against: string | null) {
      yield* visible(principal, agentId)
      const snapshotCid = yield* Effect.fromResult(Snapshot.pathSnapshotCid(cid))
      const base = yield* Effect.fromResult(Snapshot.diffAgainst(against))
      const { state } = yield* history(agentId)
      for (const cid of [snapshotCid, base]) if (!Snapshot.holds(state, cid)) return yield* new Snapshot.SnapshotNotFound({ snapshotCid: cid })
      const tree = yield* store.diffTrees(base, snapshotCid).pipe(
        Effect.catchTags({ ContentNotFound: unreadable(agentId, snapshotCid), NotADirectory: unreadable(agentId, snapshotCid) }),
        Effect.catchTag("ContentStoreUnavailable", unavailable("diff"))
      )
      return { snapshotCid, against: base, ...tree } satisfies SnapshotDiff
    })

    /**
     * A kept snapshot as a CARv1 (root = the snapshot, every block of its DAG once, streamed from the store) or a
     * gzipped tar of its files (SnapshotTar). What could fail at once is checked before the first byte (the root
     * block is there; the tree lists), so those failures still get their status; one later cuts the stream short.
     */
    const exportSnapshot = Effect.fn("Snapshots.export")(function*(principal: Principal, agentId: string, cid: string, format: string | null) {
      yield* visible(principal, agentId)
      const snapshotCid = yield* Effect.fromResult(Snapshot.pathSnapshotCid(cid))
      const chosen = yield* Effect.fromResult(Snapshot.exportFormat(format))
      const kept = yield* keptSnapshot(agentId, snapshotCid)
      const logged = <A, E>(content: Stream.Stream<A, E>) =>
        content.pipe(Stream.tapError((error) => Effect.logWarning(`Agent ${agentId}: export of snapshot ${snapshotCid} failed`, error)))
      if (chosen === "car") {
        const present = yield* store.has(snapshotCid).pipe(Effect.catchTag("ContentStoreUnavailable", unavailable("export")))
        if (!present) return yield* unreadable(agentId, snapshotCid)({ _tag: "ContentNotFound" })
        return {
          snapshotCid,
          format: chosen,
          contentType: "application/vnd.ipld.car; version=1",
          filename: `${agentId}-${snapshotCid}.car`,
          content: logged(store.car(snapshotCid))
        } satisfies SnapshotExport
      }
      const listing = yield* store.readTree(snapshotCid).pipe(
        Effect.catchTags({ ContentNotFound: unreadable(agentId, snapshotCid), NotADirectory: unreadable(agentId, snapshotCid) }),
        Effect.catchTag("ContentStoreUnavailable", unavailable("export"))
      )
      return {
        snapshotCid,
        format: chosen,
        contentType: "application/gzip",
        filename: `${agentId}-${snapshotCid}.tar.gz`,
        content: logged(tarGz(snapshotCid, listing, store.cat, new Date(kept.at)))
      } satisfies SnapshotExport
    })

    /** Restore entries for the tree: a file this node knows holds the wanted CID already is kept, not rewritten. */
    const restoreEntries = (agentId: string, target: ReadonlyArray<TreeListing>): ReadonlyArray<RestoreEntry> => {
      const index = indexes.get(agentId)
      return target.map((entry): RestoreEntry => {
        if (entry.kind === "directory") return { path: entry.path, kind: "directory", mode: entry.mode }
        if (entry.kind === "symlink") return { path: entry.path, kind: "symlink", target: entry.target ?? "" }
        const known = index?.files.get(entry.path)
        const unchangedIf = known?.cid === entry.cid ? known.fingerprint : undefined
        return {
          path: entry.path,
          kind: "file",
          mode: entry.mode,
          content: store.cat(entry.cid),
          ...(unchangedIf === undefined ? {} : { unchangedIf })
        }
      })
    }

    const reset = Effect.fn("Snapshots.reset")(function*(principal: Principal, agentId: string, body: string) {
      const agent = yield* visible(principal, agentId)
      const snapshotCid = yield* Effect.fromResult(Snapshot.resetTarget(body))
      return yield* Effect.gen(function*() {
        const { state } = yield* history(agentId)
        if (!Snapshot.holds(state, snapshotCid)) return yield* new Snapshot.SnapshotNotFound({ snapshotCid })
        const failure = (reason: string, preResetCid?: string) =>
          Effect.gen(function*() {
            yield* Effect.logWarning(`Agent ${agentId}: reset to ${snapshotCid} failed: ${reason}`)
            yield* record(agentId, new Snapshot.RecordResetFailure({
              agentId,
              workspaceId: agent.workspaceId,
              snapshotCid,
              ...(preResetCid === undefined ? {} : { preResetCid }),
              reason,
              at: yield* now
            }), principal.userId).pipe(Effect.ignore)
            return yield* new Snapshot.ResetFailed({ agentId, ...(preResetCid === undefined ? {} : { preResetCid }) })
          })
        // The tree is read before anything is touched: a snapshot whose blocks are gone fails with the workspace intact.
        const target = yield* store.readTree(snapshotCid).pipe(
          Effect.catchTag("ContentStoreUnavailable", unavailable("read")),
          Effect.catchTags({ ContentNotFound: () => failure("the snapshot's blocks are missing"), NotADirectory: () => failure("the snapshot is not a directory") })
        )
        const pre = yield* take(agentId, agent.workspaceId, "pre-reset", principal.userId).pipe(
          Effect.catchTag("SyncFailed", () => failure("the pre-reset snapshot could not be taken"))
        )
        // The gateway is stopped while its workspace is replaced, and started again (if it ran) before this answers.
        const restored = yield* gateway.whileStopped(
          agentId,
          agent.engineVersion,
          "a workspace reset",
          engine.restoreWorkspace(agentId, restoreEntries(agentId, target), { exclude: excluded })
        )
        if (Result.isSuccess(restored)) {
          // The workspace is the target tree now; files kept in place keep their fingerprints (a chmod changes one,
          // which costs only a read at the next snapshot).
          const index = indexes.get(agentId)
          const targetFiles = new Map(target.filter((e) => e.kind === "file").map((e) => [e.path, e] as const))
          indexes.set(agentId, {
            cid: snapshotCid,
            files: new Map([...(index?.files ?? [])].filter(([path, file]) => targetFiles.get(path)?.cid === file.cid))
          })
        } else {
          indexes.delete(agentId)
        }
        if (Result.isFailure(restored)) {
          yield* Effect.logWarning(`Agent ${agentId}: workspace restore failed`, restored.failure)
          return yield* failure("the workspace could not be restored", pre.snapshotCid)
        }
        yield* record(agentId, new Snapshot.RecordReset({
          agentId,
          workspaceId: agent.workspaceId,
          snapshotCid,
          preResetCid: pre.snapshotCid,
          at: yield* now
        }), principal.userId)
        return { snapshotCid, preResetCid: pre.snapshotCid } satisfies ResetOutcome
      }).pipe(oneAtATime(agentId))
    })

    /**
     * Makes a provisioned agent's workspace its latest snapshot, on a node that adopts the agent after its node's
     * lease expired (Failover.ts): the restored snapshot's CID, or none when there is nothing to restore from
     * (snapshots off, none taken yet); a snapshot whose blocks this node cannot read fails.
     */
    const restoreLatest = (agentId: string) =>
      Effect.gen(function*() {
        if (!settings.enabled) return Option.none<string>()
        const latest = Snapshot.latest((yield* history(agentId)).state)
        if (latest === undefined) return Option.none<string>()
        const target = yield* store.readTree(latest.cid)
        yield* engine.restoreWorkspace(agentId, restoreEntries(agentId, target), { exclude: excluded })
        indexes.delete(agentId)
        return Option.some(latest.cid)
      }).pipe(oneAtATime(agentId))

    /**
     * The agent of the workspace whose kept snapshots hold the snapshot a fork starts from (a deleted one's too,
     * within its grace period); 404 for any other CID.
     */
    const forkSource = Effect.fn("Snapshots.forkSource")(function*(principal: Principal, snapshotCid: string) {
      const sourceId = yield* table.holderIn(principal.workspaceId, snapshotCid)
      if (sourceId === undefined) return yield* new Snapshot.SnapshotNotFound({ snapshotCid })
      return sourceId
    })

    /** The decision that records the fork on its source's snapshot history, for the fork's own append. */
    const forkDecision = (sourceId: string, snapshotCid: string, forkAgentId: string, at: string) =>
      Effect.map(history(sourceId), (loaded) =>
        decision(Snapshot.decider, Snapshot.stream(sourceId), new Snapshot.RecordFork({ agentId: sourceId, snapshotCid, forkAgentId, at }), loaded))

    /**
     * Makes a provisioned, stopped agent's workspace the snapshot (a fork's first start); the tree is read first, so
     * a snapshot whose blocks are gone fails before anything is written.
     */
    const restoreInto = (agentId: string, snapshotCid: string) =>
      Effect.gen(function*() {
        const target = yield* store.readTree(snapshotCid)
        yield* engine.restoreWorkspace(agentId, restoreEntries(agentId, target), { exclude: excluded })
      }).pipe(oneAtATime(agentId))

    /** Removes blocks no kept snapshot reaches, while nothing is being imported. */
    const collectGarbage = Effect.gen(function*() {
      expiredSinceCollection = false
      const live = yield* table.liveRoots
      const { blocksRemoved } = yield* store.collectGarbage(live)
      if (blocksRemoved > 0) yield* Effect.logInfo(`Snapshot garbage collection removed ${blocksRemoved} blocks`)
    }).pipe(collecting)

    /** Deleted agents past their grace period: their snapshots expire. */
    const expireDeleted = Effect.gen(function*() {
      const cutoff = new Date(Date.parse(yield* now) - settings.deletedGraceMs).toISOString()
      for (const agentId of yield* table.deletedBefore(cutoff)) {
        const { events } = yield* record(agentId, new Snapshot.ExpireAll({
          agentId,
          reason: "agent-deleted",
          at: yield* now
        }), "snapshots")
        indexes.delete(agentId)
        if (events.length > 0) expiredSinceCollection = true
      }
    })

    /** One round: a snapshot of every agent running here whose workspace changed, then expiry and collection. */
    const round = Effect.gen(function*() {
      for (const agent of yield* agentsTable.runningOn(gateway.node)) {
        yield* take(agent.agentId, agent.workspaceId, "auto", "snapshots").pipe(
          oneAtATime(agent.agentId),
          // Below the disk reserve the refusal is logged already (DiskReserve.ts); the next round tries again.
          Effect.catchTag("InsufficientStorage", () => Effect.void),
          Effect.catchCause((cause) => Effect.logWarning(`Agent ${agent.agentId}: automatic snapshot failed`, cause))
        )
      }
      yield* expireDeleted
      if (expiredSinceCollection) yield* collectGarbage
    })

    /** Automatic snapshots for as long as the node runs (nothing when snapshots or their interval are off). */
    const run = Effect.gen(function*() {
      if (!settings.enabled || settings.intervalMs <= 0) return
      yield* Effect.sleep(settings.intervalMs).pipe(
        Effect.andThen(round),
        Effect.catchCause((cause) => Effect.logError("Snapshot round failed", cause)),
        Effect.forever
      )
    })

    return { sync, status, list, diff, export: exportSnapshot, reset, beforeDelete, beforeSleep, restoreLatest, forkSource, forkDecision, restoreInto, round, collectGarbage, run }
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
