/**
 * An agent's workspace snapshots: take one now (`POST …/snapshots/sync`), whether snapshots are configured and the
 * last one's time (`GET …/snapshots/sync`), the kept ones newest first (`GET …/snapshots?limit=&pageToken=`), and a
 * reset to one of them (`POST …/snapshots/reset {snapshotCid}`), which takes a `pre-reset` snapshot first. The reset
 * body is read as text, so that one that is not JSON is `Invalid snapshot CID` like any body without a CID.
 */
import { Snapshots } from "@cairn/application"
import { Effect } from "effect"
import { HttpRouter } from "effect/http"
import * as Kit from "./Kit.ts"

export const layer = HttpRouter.use((router) =>
  Effect.gen(function*() {
    const { agentRoute } = yield* Kit.make(router)
    const snapshots = yield* Snapshots

    yield* agentRoute("POST", "/v0/agents/:agentId/snapshots/sync", ({ principal, agentId }) =>
      Effect.map(snapshots.sync(principal, agentId), (outcome) => ({
        success: true,
        message: outcome.recorded ? "Snapshot taken" : "Workspace unchanged since the latest snapshot",
        snapshotCid: outcome.snapshotCid,
        lastSync: outcome.lastSync,
        changeSummary: outcome.changeSummary
      })))

    yield* agentRoute("GET", "/v0/agents/:agentId/snapshots/sync", ({ principal, agentId }) => snapshots.status(principal, agentId))

    yield* agentRoute("GET", "/v0/agents/:agentId/snapshots", ({ principal, agentId, request }) =>
      snapshots.list(principal, agentId, Kit.query(request, "limit"), Kit.query(request, "pageToken")))

    yield* agentRoute("POST", "/v0/agents/:agentId/snapshots/reset", ({ principal, agentId, request }) =>
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
