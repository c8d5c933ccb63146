/**
 * An agent's workspace snapshots: take one now (`POST …/snapshots/sync`), whether snapshots are configured and the
 * last one's time (`GET …/snapshots/sync`), the kept ones newest first (`GET …/snapshots?limit=&pageToken=`), and a
 * reset to one of them (`POST …/snapshots/reset {snapshotCid}`), which takes a `pre-reset` snapshot first. The reset
 * body is read as text, so that one that is not JSON is `Invalid snapshot CID` like any body without a CID. Below
 * the data directory's disk reserve a sync (and so a reset) is refused before anything is stored (507).
 * A kept snapshot compared with another (`GET …/snapshots/{cid}/diff?against=`), and exported as a CAR or a
 * gzipped tar (`GET …/snapshots/{cid}/export?format=car|tar.gz`), streamed.
 */
import { Snapshots } from "@cairn/application"
import type { TreeDiffEntry } from "@cairn/content-store"
import { Agent, DiskSpace, Snapshot } from "@cairn/domain"
import { Effect, Schema } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import { standardHeaders } from "../Respond.ts"
import * as Kit from "./Kit.ts"

const SnapshotsQuery = Schema.Struct({ limit: Schema.optionalKey(Schema.String), pageToken: Schema.optionalKey(Schema.String) })

/** How a snapshot differs from the one before it: files added, changed and gone; new content's bytes. */
const ChangeSummaryWire = Schema.Struct({ added: Schema.Int, modified: Schema.Int, deleted: Schema.Int, bytesAdded: Schema.Int })
const changeSummaryWire = (summary: Snapshot.ChangeSummary): typeof ChangeSummaryWire.Type => ({
  added: summary.added,
  modified: summary.modified,
  deleted: summary.deleted,
  bytesAdded: summary.bytesAdded
})

const Synced = Schema.Struct({
  success: Schema.Boolean,
  message: Schema.String,
  snapshotCid: Schema.String,
  lastSync: Schema.String,
  changeSummary: ChangeSummaryWire
})
const SyncStatus = Schema.Struct({ agentId: Schema.String, configured: Schema.Boolean, lastSync: Schema.NullOr(Schema.String), message: Schema.String })

const SnapshotWire = Schema.Struct({
  snapshotCid: Schema.String,
  createdAt: Schema.String,
  trigger: Snapshot.Trigger,
  changeSummary: ChangeSummaryWire,
  files: Schema.Int,
  bytes: Schema.Int
})
const snapshotWire = (snapshot: Omit<typeof SnapshotWire.Type, "changeSummary"> & { readonly changeSummary: Snapshot.ChangeSummary }): typeof SnapshotWire.Type => ({
  snapshotCid: snapshot.snapshotCid,
  createdAt: snapshot.createdAt,
  trigger: snapshot.trigger,
  changeSummary: changeSummaryWire(snapshot.changeSummary),
  files: snapshot.files,
  bytes: snapshot.bytes
})
/** A page of snapshots, newest first; `nextPageToken` asks for the older ones. */
const SnapshotPage = Schema.Struct({ agentId: Schema.String, snapshots: Schema.Array(SnapshotWire), nextPageToken: Schema.optionalKey(Schema.String) })

const DiffQuery = Schema.Struct({ against: Schema.String.annotate({ description: "The CID of the snapshot to compare with (one of the agent's)" }) })
const ExportQuery = Schema.Struct({ format: Schema.Literals(["car", "tar.gz"]).annotate({ description: "car: the snapshot's DAG (CARv1); tar.gz: its files" }) })

/** A file or symlink named by a diff; `mode` in octal (`"0644"`), `target` for a symlink. */
const DiffEntryWire = Schema.Struct({
  path: Schema.String,
  kind: Schema.Literals(["file", "symlink"]),
  size: Schema.Int,
  cid: Schema.String,
  mode: Schema.String,
  target: Schema.optionalKey(Schema.String)
})
const ChangedEntryWire = Schema.Struct({
  ...DiffEntryWire.fields,
  previousKind: Schema.Literals(["file", "symlink"]),
  previousSize: Schema.Int,
  previousCid: Schema.String,
  previousMode: Schema.String,
  previousTarget: Schema.optionalKey(Schema.String)
})
/** How `snapshotCid` differs from `against`: what it adds, removes and changes (each in path order). */
const SnapshotDiffWire = Schema.Struct({
  agentId: Schema.String,
  snapshotCid: Schema.String,
  against: Schema.String,
  added: Schema.Array(DiffEntryWire),
  removed: Schema.Array(DiffEntryWire),
  changed: Schema.Array(ChangedEntryWire)
})
const octal = (mode: number) => mode.toString(8).padStart(4, "0")
const diffEntryWire = (entry: TreeDiffEntry): typeof DiffEntryWire.Type => ({
  path: entry.path,
  kind: entry.kind,
  size: entry.size,
  cid: entry.cid,
  mode: octal(entry.mode),
  ...(entry.target === undefined ? {} : { target: entry.target })
})
const changedEntryWire = ({ before, after }: { readonly before: TreeDiffEntry; readonly after: TreeDiffEntry }): typeof ChangedEntryWire.Type => ({
  ...diffEntryWire(after),
  previousKind: before.kind,
  previousSize: before.size,
  previousCid: before.cid,
  previousMode: octal(before.mode),
  ...(before.target === undefined ? {} : { previousTarget: before.target })
})

/** A sync or reset below the disk reserve, for the route catalog. */
const insufficientStorage = new DiskSpace.InsufficientStorage({ freeBytes: 0, reserveBytes: 0, bytes: 0 })

const Reset = Schema.Struct({ success: Schema.Boolean, snapshotCid: Schema.String, preResetCid: Schema.String, message: Schema.String })

export const layer = HttpRouter.use((router) =>
  Effect.gen(function*() {
    const { agentRoute } = yield* Kit.make(router)
    const snapshots = yield* Snapshots

    yield* agentRoute("POST", "/v0/agents/:agentId/snapshots/sync", { summary: "Take a snapshot of the agent's workspace now", response: { schema: Synced }, errors: [new Agent.AgentNotFound({ agentId: "" }), new Snapshot.StorageNotConfigured(), new Snapshot.SyncFailed({ agentId: "" }), new Snapshot.SnapshotStorageUnavailable({ operation: "" }), insufficientStorage] }, ({ principal, agentId }) =>
      Effect.map(snapshots.sync(principal, agentId), (outcome) => ({
        success: true,
        message: outcome.recorded ? "Snapshot taken" : "Workspace unchanged since the latest snapshot",
        snapshotCid: outcome.snapshotCid,
        lastSync: outcome.lastSync,
        changeSummary: changeSummaryWire(outcome.changeSummary)
      })))

    yield* agentRoute("GET", "/v0/agents/:agentId/snapshots/sync", { summary: "Whether snapshots are configured, and the last one's time", response: { schema: SyncStatus }, errors: [new Agent.AgentNotFound({ agentId: "" })] }, ({ principal, agentId }) =>
      Effect.map(snapshots.status(principal, agentId), ({ agentId, configured, lastSync, message }): typeof SyncStatus.Type => ({ agentId, configured, lastSync, message })))

    yield* agentRoute("GET", "/v0/agents/:agentId/snapshots", { summary: "The agent's snapshots, newest first", query: SnapshotsQuery, response: { schema: SnapshotPage }, errors: [new Agent.AgentNotFound({ agentId: "" }), new Snapshot.StorageNotConfigured()] }, ({ principal, agentId, request }) =>
      Effect.map(snapshots.list(principal, agentId, Kit.query(request, "limit"), Kit.query(request, "pageToken")), (page): typeof SnapshotPage.Type => ({
        agentId: page.agentId,
        snapshots: page.snapshots.map(snapshotWire),
        ...(page.nextPageToken === undefined ? {} : { nextPageToken: page.nextPageToken })
      })))

    const readErrors = [new Agent.AgentNotFound({ agentId: "" }), new Snapshot.StorageNotConfigured(), new Snapshot.InvalidSnapshotCid(), new Snapshot.SnapshotNotFound({ snapshotCid: "" }), new Snapshot.SnapshotStorageUnavailable({ operation: "" })]

    yield* agentRoute("GET", "/v0/agents/:agentId/snapshots/:snapshotCid/diff", {
      summary: "How a snapshot differs from another of the agent's: files and symlinks added, removed and changed",
      description: "Read from the two snapshots' DAGs together: a file or folder whose CID is the same in both is not read.",
      query: DiffQuery,
      response: { schema: SnapshotDiffWire },
      errors: readErrors
    }, ({ principal, agentId, params, request }) =>
      Effect.map(snapshots.diff(principal, agentId, params["snapshotCid"] ?? "", Kit.query(request, "against")), (diff): typeof SnapshotDiffWire.Type => ({
        agentId,
        snapshotCid: diff.snapshotCid,
        against: diff.against,
        added: diff.added.map(diffEntryWire),
        removed: diff.removed.map(diffEntryWire),
        changed: diff.changed.map(changedEntryWire)
      })))

    yield* agentRoute("GET", "/v0/agents/:agentId/snapshots/:snapshotCid/export", {
      summary: "Download a snapshot: its DAG as a CARv1 (`format=car`) or its files as a gzipped tar (`format=tar.gz`)",
      description: "Streamed. The CAR's root is the snapshot's CID, any IPFS tool imports it; the tar holds one folder " +
        "named after the CID, with the stored modes and symlinks.",
      query: ExportQuery,
      response: { contentType: "application/vnd.ipld.car", description: "format=car: the snapshot's DAG as a CARv1 rooted at its CID" },
      otherResponses: [{ contentType: "application/gzip", description: "format=tar.gz: the snapshot's files as a gzipped tar" }],
      errors: readErrors
    }, ({ principal, agentId, params, request }) =>
      Effect.map(snapshots.export(principal, agentId, params["snapshotCid"] ?? "", Kit.query(request, "format")), (archive) =>
        HttpServerResponse.stream(archive.content, {
          contentType: archive.contentType,
          headers: standardHeaders({
            "content-disposition": `attachment; filename="${archive.filename}"`,
            // A snapshot's content never changes under its CID, but who may read it does.
            "cache-control": "private, no-store",
            "x-content-type-options": "nosniff"
          })
        }))
    )

    yield* agentRoute("POST", "/v0/agents/:agentId/snapshots/reset", { summary: "Reset the workspace to a snapshot (a pre-reset snapshot is taken first)", body: { contentType: "application/json", description: "{snapshotCid}" }, response: { schema: Reset }, errors: [new Agent.AgentNotFound({ agentId: "" }), new Snapshot.InvalidSnapshotCid(), new Snapshot.SnapshotNotFound({ snapshotCid: "" }), new Snapshot.ResetFailed({ agentId: "" }), insufficientStorage] }, ({ principal, agentId, request }) =>
      Effect.gen(function*() {
        const outcome = yield* snapshots.reset(principal, agentId, yield* request.text)
        return {
          success: true,
          snapshotCid: outcome.snapshotCid,
          preResetCid: outcome.preResetCid,
          message: `Workspace reset to ${outcome.snapshotCid}; the snapshot taken before it is ${outcome.preResetCid}`
        }
      }))
  })
)
