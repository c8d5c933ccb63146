/**
 * The warm pool's log: each reservation, take and discard recorded as it happened; the state is what a restart must
 * clear away, the ids reserved and neither taken nor discarded.
 */
import { AgentPool as Pool } from "@cairn/domain"
import { assert, describe, it } from "@effect/vitest"
import { given } from "../DeciderSpec.ts"

const at = "2026-11-29T00:00:00.000Z"
const reserved = (agentId: string) => new Pool.PoolGatewayReserved({ agentId, version: "2026.9.6", at })
const taken = (agentId: string) => new Pool.PoolGatewayTaken({ agentId, workspaceId: "ws-1", at })
const discarded = (agentId: string) => new Pool.PoolGatewayDiscarded({ agentId, reason: "crashed", at })
const left = (history: ReadonlyArray<Pool.PoolEvent>) => [...history.reduce(Pool.decider.evolve, Pool.decider.initial).reserved.keys()]

describe("the warm pool's log", () => {
  it("records each command as its event", () => {
    given(Pool.decider).when(new Pool.ReservePoolGateway({ agentId: "a", version: "2026.9.6", at })).then([reserved("a")])
    given(Pool.decider, [reserved("a")]).when(new Pool.TakePoolGateway({ agentId: "a", workspaceId: "ws-1", at })).then([taken("a")])
    given(Pool.decider, [reserved("a")]).when(new Pool.DiscardPoolGateway({ agentId: "a", reason: "crashed", at })).then([discarded("a")])
    given(Pool.decider, [reserved("a")]).when(new Pool.DiscardPoolGateway({ agentId: "a", reason: "failed", detail: "port in use", at }))
      .then([new Pool.PoolGatewayDiscarded({ agentId: "a", reason: "failed", detail: "port in use", at })])
  })

  it("leaves to a restart exactly the ids reserved and neither taken nor discarded", () => {
    assert.deepStrictEqual(left([]), [])
    assert.deepStrictEqual(left([reserved("a"), reserved("b"), taken("a")]), ["b"])
    assert.deepStrictEqual(left([reserved("a"), reserved("b"), discarded("b"), reserved("c")]), ["a", "c"])
    assert.deepStrictEqual(left([reserved("a"), taken("a"), reserved("b"), discarded("b")]), [])
  })
})
