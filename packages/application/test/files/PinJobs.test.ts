/**
 * PinJobs over the test runtime (a fresh PGlite database, the in-memory content store) with a pin source the test
 * scripts: a job goes prechecking → retrieving → pinned with its file recorded in the same append; a source's refusal
 * is the job's failed reason; a job cancelled while it retrieves is never pinned; a job a stop left retrieving is
 * worked on again when the worker starts; below the disk reserve a job fails and stores nothing.
 */
import { CommandHandler, Files, FreeSpace, PinJobs, type Principal } from "@cairn/application"
import { type Block, ContentStore, PinSources, type PinSourcesService, RetrievalFailed } from "@cairn/content-store"
import { PinJob } from "@cairn/domain"
import { EventStore } from "@cairn/event-store"
import { TestRuntime } from "@cairn/runtime/testing"
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Layer } from "effect"
import { CID } from "multiformats/cid"
import * as raw from "multiformats/codecs/raw"
import { sha256 } from "multiformats/hashes/sha2"

const principal: Principal = { workspaceId: "w-pins", userId: "u1", keyId: "k1", scopes: [] }

const blockOf = (text: string): Block => {
  const bytes = new TextEncoder().encode(text)
  return { cid: CID.create(1, raw.code, sha256.digest(bytes) as unknown as Awaited<ReturnType<typeof sha256.digest>>).toString(), bytes }
}

const runtime = (sources: PinSourcesService, options: { readonly free?: number } = {}) =>
  Layer.fresh(TestRuntime.layerTest(options.free === undefined ? {} : { freeSpace: FreeSpace.layerTest(() => options.free) }))
    .pipe(Layer.provide(Layer.succeed(PinSources, sources)))

const statusOf = (jobId: string) =>
  Effect.gen(function*() {
    const jobs = yield* PinJobs
    return (yield* jobs.get(principal, jobId)).status
  })

const waitFor = (jobId: string, status: PinJob.PinJobStatus) =>
  Effect.gen(function*() {
    for (let i = 0; i < 500; i++) {
      if ((yield* statusOf(jobId)) === status) return
      yield* Effect.sleep("20 millis")
    }
    assert.fail(`job ${jobId} never became ${status}; it is ${yield* statusOf(jobId)}`)
  })

const eventsOf = (jobId: string) =>
  Effect.gen(function*() {
    const store = yield* EventStore
    const read = yield* store.readStream(PinJob.stream(jobId))
    return read.map((event) => event.type)
  })

describe("PinJobs", () => {
  it.live("pins: prechecking, retrieving, then pinned with its file recorded; the bytes are in the store", () => {
    const block = blockOf("pinned through the worker")
    return Effect.gen(function*() {
      const jobs = yield* PinJobs
      yield* Effect.forkScoped(jobs.run)
      const job = yield* jobs.submit(principal, "public", { cid: block.cid, name: "note", keyvalues: { a: "b" } })
      assert.strictEqual(job.status, "prechecking")
      yield* waitFor(job.id, "pinned")
      const done = yield* jobs.get(principal, job.id)
      const file = yield* (yield* Files).get(principal, "public", done.fileId!)
      assert.deepStrictEqual([file.cid, file.name, file.size, file.keyvalues, file.numberOfFiles], [block.cid, "note", block.bytes.byteLength, { a: "b" }, 1])
      assert.isTrue(yield* (yield* ContentStore).has(block.cid, "public"))
      assert.deepStrictEqual(yield* eventsOf(job.id), ["PinJobQueued", "PinJobRetrieving", "PinJobPinned"])
    }).pipe(Effect.scoped, Effect.provide(runtime({ describe: [], retrieve: () => Effect.succeed([block]) })))
  })

  it.live("fails with the source's reason, and records no file", () => {
    const block = blockOf("a liar's")
    return Effect.gen(function*() {
      const jobs = yield* PinJobs
      yield* Effect.forkScoped(jobs.run)
      const job = yield* jobs.submit(principal, "public", { cid: block.cid })
      yield* waitFor(job.id, "failed")
      assert.strictEqual((yield* jobs.get(principal, job.id)).reason, "block lies")
      assert.strictEqual((yield* (yield* Files).list(principal, "public", { order: "DESC", limit: 10 })).files.length, 0)
      assert.isFalse(yield* (yield* ContentStore).has(block.cid, "public"))
    }).pipe(Effect.scoped, Effect.provide(runtime({ describe: [], retrieve: () => Effect.fail(new RetrievalFailed({ reason: "block lies" })) })))
  })

  it.live("cancels a job while it retrieves: never pinned; a second cancel is refused", () => {
    const block = blockOf("cancelled midway")
    return Effect.gen(function*() {
      const started = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const sources: PinSourcesService = {
        describe: [],
        retrieve: () => Deferred.succeed(started, undefined).pipe(Effect.andThen(Deferred.await(release)), Effect.as([block]))
      }
      return yield* Effect.gen(function*() {
        const jobs = yield* PinJobs
        yield* Effect.forkScoped(jobs.run)
        const job = yield* jobs.submit(principal, "public", { cid: block.cid })
        yield* Deferred.await(started)
        yield* jobs.cancel(principal, job.id)
        yield* Deferred.succeed(release, undefined)
        yield* Effect.sleep("200 millis")
        assert.strictEqual(yield* statusOf(job.id), "cancelled")
        assert.deepStrictEqual(yield* eventsOf(job.id), ["PinJobQueued", "PinJobRetrieving", "PinJobCancelled"])
        const again = yield* Effect.flip(jobs.cancel(principal, job.id))
        assert.strictEqual(again.message, "Pin job is already cancelled")
        const stranger = yield* Effect.flip(jobs.cancel({ ...principal, workspaceId: "w-other" }, job.id))
        assert.strictEqual(stranger._tag, "PinJobNotFound")
      }).pipe(Effect.provide(runtime(sources)))
    }).pipe(Effect.scoped)
  })

  it.live("works again, when the worker starts, on a job a stop left retrieving", () => {
    const block = blockOf("left retrieving")
    return Effect.gen(function*() {
      const commands = yield* CommandHandler
      const at = new Date().toISOString()
      yield* commands.execute(PinJob.decider, PinJob.stream("left"), new PinJob.QueuePin({
        jobId: "left", workspaceId: principal.workspaceId, userId: principal.userId, network: "public", cid: block.cid, name: "left",
        groupId: null, keyvalues: {}, hostNodes: [], node: "local", at
      }), { actor: "u1" })
      yield* commands.execute(PinJob.decider, PinJob.stream("left"), new PinJob.StartRetrieving({ jobId: "left", node: "local", at }), { actor: "u1" })
      const jobs = yield* PinJobs
      yield* Effect.forkScoped(jobs.run)
      yield* waitFor("left", "pinned")
      // Recorded retrieving once: the resumed job's own StartRetrieving decided nothing new.
      assert.deepStrictEqual(yield* eventsOf("left"), ["PinJobQueued", "PinJobRetrieving", "PinJobPinned"])
    }).pipe(Effect.scoped, Effect.provide(runtime({ describe: [], retrieve: () => Effect.succeed([block]) })))
  })

  it.live("refuses to store below the disk reserve: the job fails, nothing stored", () => {
    const block = blockOf("no room")
    return Effect.gen(function*() {
      const jobs = yield* PinJobs
      yield* Effect.forkScoped(jobs.run)
      const job = yield* jobs.submit(principal, "public", { cid: block.cid })
      yield* waitFor(job.id, "failed")
      assert.strictEqual((yield* jobs.get(principal, job.id)).reason, "insufficient storage on this node")
      assert.isFalse(yield* (yield* ContentStore).has(block.cid, "public"))
    }).pipe(Effect.scoped, Effect.provide(runtime({ describe: [], retrieve: () => Effect.succeed([block]) }, { free: 0 })))
  })
})
