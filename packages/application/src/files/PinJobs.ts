/**
 * Pin by CID (`/v3/files/{network}/pin_by_cid`, and the IPFS Pinning Service API's pins, which are the same jobs): a
 * job is queued (`prechecking`), then a worker of this node's takes it (`retrieving`), asks the pin sources for the
 * whole DAG (`PinSources`: every block checked against its CID, a block that lies fails the job and nothing is
 * stored), stores the blocks and records the CID as a file of the job's workspace in the append that marks the job
 * `pinned` (Files.recordPin), or records why it `failed`. At most `concurrency` jobs are worked on at once, each for
 * at most `timeoutMs`. The worker is a loop the server starts (`run`); at its start it takes every job of this node's
 * still open, so a job queued or retrieving when Cairn stopped is worked on again. A job is one node's (the one it
 * was queued on, recorded with it): nodes sharing a database never work on the same job, and in a cluster a node
 * takes over the open jobs of a node whose lease expired, one node winning each (PinJob.StartRetrieving's
 * `takeFrom`). A cancel is recorded first, then the job's fiber is interrupted, so a job cancelled while it stores is
 * never recorded pinned.
 */
import { ContentStore, dagSummary, PinSources } from "@cairn/content-store"
import { canonical, type File, type Network, PinJob, ValidationFailed } from "@cairn/domain"
import { Context, Duration, Effect, FiberMap, Layer, Option, Queue, Semaphore } from "effect"
import { SqlClient } from "effect/sql"
import type { Principal } from "../Access.ts"
import { AgentsNode, ClusterSettings, NodeLeases } from "../cluster/NodeLeases.ts"
import { CommandHandler } from "../CommandHandler.ts"
import { DiskReserve } from "../DiskReserve.ts"
import { now } from "../Now.ts"
import * as PinJobsTable from "../readmodels/PinJobsTable.ts"
import { Files } from "./Files.ts"

export type { PinJobView } from "../readmodels/PinJobsTable.ts"

export interface PinSettingsShape {
  /** Jobs worked on at once on this node (PIN_CONCURRENCY). */
  readonly concurrency: number
  /** How long one job may take to retrieve and store its DAG before it fails (PIN_TIMEOUT). */
  readonly timeoutMs: number
}

export const defaultPinSettings: PinSettingsShape = { concurrency: 4, timeoutMs: 10 * 60_000 }

export const PinSettings = Context.Reference<PinSettingsShape>("cairn/PinSettings", { defaultValue: () => defaultPinSettings })

export interface PinRequest {
  readonly cid: string
  readonly name?: string | undefined
  readonly groupId?: string | null | undefined
  readonly keyvalues?: File.KeyValues | undefined
  readonly hostNodes?: ReadonlyArray<string> | undefined
  readonly meta?: File.KeyValues | undefined
  readonly psa?: boolean | undefined
}

const folderMimeType = "directory"

export class PinJobs extends Context.Service<PinJobs>()("cairn/PinJobs", {
  make: Effect.gen(function*() {
    const commands = yield* CommandHandler
    const table = PinJobsTable.queries(yield* SqlClient.SqlClient)
    const content = yield* ContentStore
    const sources = yield* PinSources
    const settings = yield* PinSettings
    const reserve = yield* DiskReserve
    const files = yield* Files
    const node = yield* AgentsNode
    const leases = yield* NodeLeases
    const cluster = yield* ClusterSettings
    const queue = yield* Queue.unbounded<string>()
    const running = yield* FiberMap.make<string>()
    const permits = yield* Semaphore.make(Math.max(1, settings.concurrency))

    const submit = Effect.fn("PinJobs.submit")(function*(principal: Principal, network: Network, request: PinRequest) {
      // The routes decode the CID; a caller that did not still gets no job for a string that is none.
      if (Option.isNone(canonical(request.cid))) return yield* new ValidationFailed({ detail: "cid is not a valid CID" })
      // A group the workspace does not have on this network is refused before anything is queued, as for uploads.
      yield* files.requireGroup(principal, network, request.groupId ?? null)
      const jobId = crypto.randomUUID()
      const at = yield* now
      yield* commands.execute(PinJob.decider, PinJob.stream(jobId), new PinJob.QueuePin({
        jobId,
        workspaceId: principal.workspaceId,
        userId: principal.userId,
        network,
        cid: request.cid,
        name: request.name ?? request.cid,
        groupId: request.groupId ?? null,
        keyvalues: request.keyvalues ?? {},
        hostNodes: [...request.hostNodes ?? []],
        ...(request.meta === undefined ? {} : { meta: request.meta }),
        ...(request.psa === true ? { psa: true } : {}),
        node,
        at
      }), { actor: principal.userId })
      yield* Queue.offer(queue, jobId)
      return yield* get(principal, jobId)
    })

    const get = (principal: Principal, jobId: string) =>
      table.byId(principal.workspaceId, jobId).pipe(Effect.flatMap(Option.match({
        onNone: () => Effect.fail(new PinJob.PinJobNotFound({ jobId })),
        onSome: Effect.succeed
      })))

    const list = (principal: Principal, filter: { readonly network?: Network; readonly psa?: boolean }) =>
      table.inWorkspace(principal.workspaceId, filter)

    /**
     * Cancels an open job (v3's DELETE); with `evenIfFinished` (the Pinning Service API's remove) a pinned or failed
     * one too, and a pinned one's file is deleted with it. Decided on the job's own stream, not on the read model,
     * which can lag behind a pin just recorded: the job pinned meanwhile is removed with its file, not refused.
     */
    const cancel = Effect.fn("PinJobs.cancel")(function*(principal: Principal, jobId: string, options: { readonly evenIfFinished?: boolean } = {}) {
      const job = yield* get(principal, jobId)
      const command = new PinJob.CancelPin({
        jobId,
        workspaceId: principal.workspaceId,
        at: yield* now,
        ...(options.evenIfFinished === true ? { evenIfFinished: true } : {})
      })
      const { state } = yield* commands.execute(PinJob.decider, PinJob.stream(jobId), command, { actor: principal.userId })
      yield* FiberMap.remove(running, jobId)
      // A file is recorded with the job's pin, in the same append: a job that has one was pinned.
      const fileId = state._tag === "Job" ? state.fileId : undefined
      if (fileId !== undefined) {
        yield* files.remove(principal, job.network, fileId).pipe(Effect.catchTag("FileNotFound", () => Effect.void))
      }
    })

    const fail = (job: PinJobsTable.PinJobView, reason: string) =>
      Effect.flatMap(now, (at) =>
        commands.execute(PinJob.decider, PinJob.stream(job.id), new PinJob.MarkFailed({ jobId: job.id, reason, at }), { actor: job.userId })).pipe(
          Effect.tap(() => Effect.logInfo(`Pin job ${job.id} (${job.cid}) failed: ${reason}`)),
          Effect.catchTag(["PinJobFinished", "PinJobNotFound"], () => Effect.void)
        )

    /** Works on one job: retrieve, check, store, record; any failure is the job's `failed` reason. */
    const work = (job: PinJobsTable.PinJobView, takeFrom: string | undefined) =>
      Effect.gen(function*() {
        yield* commands.execute(
          PinJob.decider,
          PinJob.stream(job.id),
          new PinJob.StartRetrieving({ jobId: job.id, node, at: yield* now, ...(takeFrom === undefined ? {} : { takeFrom }) }),
          { actor: job.userId }
        )
        if (takeFrom !== undefined) yield* Effect.logInfo(`Pin job ${job.id} (${job.cid}): taken over from node ${takeFrom}, whose lease expired`)
        const started = Date.now()
        const blocks = yield* sources.retrieve(job.cid)
        const retrieved = Date.now()
        const bytes = blocks.reduce((total, block) => total + block.bytes.byteLength, 0)
        yield* reserve.ensureRoom(bytes)
        yield* content.putBlocks(job.cid, blocks, job.network)
        const stored = Date.now()
        // What the file record says (a folder's files and bytes) is counted from the blocks in hand, not read back.
        const summary = dagSummary(job.cid, blocks)
        const walked = Date.now()
        yield* files.recordPin({
          jobId: job.id,
          workspaceId: job.workspaceId,
          userId: job.userId,
          network: job.network,
          cid: job.cid,
          size: summary.size,
          name: job.name,
          mimeType: summary.kind === "directory" ? folderMimeType : "application/octet-stream",
          groupId: job.groupId,
          keyvalues: job.keyvalues,
          numberOfFiles: summary.kind === "directory" ? summary.files : 1
        })
        yield* Effect.logInfo(
          `Pin job ${job.id}: ${job.cid} pinned (${blocks.length} blocks, ${bytes} bytes; retrieved in ${retrieved - started} ms, ` +
            `stored in ${stored - retrieved} ms, counted in ${walked - stored} ms, recorded in ${Date.now() - walked} ms)`
        )
      }).pipe(
        Effect.timeoutOrElse({
          duration: Duration.millis(settings.timeoutMs),
          orElse: () => fail(job, `timed out after ${Math.round(settings.timeoutMs / 1000)} s retrieving ${job.cid}`)
        }),
        Effect.catchTags({
          RetrievalFailed: (failed) => fail(job, failed.reason),
          InsufficientStorage: () => fail(job, "insufficient storage on this node"),
          PinJobFinished: () => Effect.void,
          PinJobNotFound: () => Effect.void,
          PinJobTaken: () => Effect.void
        }),
        Effect.catchCause((cause) =>
          Effect.logError(`Pin job ${job.id} (${job.cid}) stopped`, cause).pipe(Effect.andThen(fail(job, "the node could not store the content")))
        )
      )

    /**
     * Takes a job off the queue (or over from `takeFrom`, an expired node): worked on when a permit frees, unless
     * done or taken already.
     */
    const start = (jobId: string, takeFrom?: string) =>
      FiberMap.run(running, jobId, Effect.gen(function*() {
        // Read again once a permit is free: a job cancelled while it waited is left alone.
        yield* permits.withPermits(1)(Effect.flatMap(table.openById(jobId), Option.match({
          onNone: () => Effect.void,
          onSome: (job) => work(job, takeFrom)
        })))
      }), { onlyIfMissing: true })

    /** In a cluster: the open jobs of nodes whose lease expired, each taken over here unless another node wins it. */
    const takeOverOrphans = Effect.gen(function*() {
      const live = yield* leases.liveNodes
      for (const job of yield* table.openElsewhere(node)) {
        if (job.node !== null && !live.has(job.node)) yield* start(job.id, job.node)
      }
    })

    /** The worker, for as long as the node runs: its open jobs first (those a stop left), then each new one. */
    const run = Effect.gen(function*() {
      const open = yield* table.openOf(node)
      if (open.length > 0) yield* Effect.logInfo(`Pin jobs: resuming ${open.length} open job(s)`)
      for (const job of open) yield* start(job.id)
      if (leases.enabled) {
        yield* takeOverOrphans.pipe(
          Effect.catchCause((cause) => Effect.logError("Pin jobs: taking over expired nodes' jobs failed", cause)),
          Effect.andThen(Effect.sleep(Duration.fromInputUnsafe(cluster.heartbeatInterval))),
          Effect.forever,
          Effect.forkScoped
        )
      }
      yield* Queue.take(queue).pipe(Effect.flatMap((jobId) => start(jobId)), Effect.forever)
    })

    return { submit, get, list, cancel, run }
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
