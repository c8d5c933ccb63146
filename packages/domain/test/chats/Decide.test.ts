import { AgentChats, AuditStreams } from "@cairn/domain"
import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"

const fields = { agentId: "a1", workspaceId: "w1", sessionKey: "cairn-0001", model: "simulated/echo-1", messageLength: 5, replyLength: 11, at: "2026-01-01T00:00:00.000Z" }

describe("the chats log", () => {
  it("records an answered turn as it happened, whatever it held before", () => {
    const decided = AgentChats.decide(new AgentChats.RecordChat(fields), AgentChats.initial)
    assert.deepStrictEqual(Result.getOrThrow(decided), [new AgentChats.ChatAnswered(fields)])
  })

  it("is its own stream, part of the agent's audit trail", () => {
    assert.strictEqual(AgentChats.stream("a1"), "chats-a1")
    assert.include(AuditStreams.auditStreams("a1"), "chats-a1")
  })

  it("documents its refusals with their statuses", () => {
    assert.deepInclude(new AgentChats.AgentNotRunning({ agentId: "a1" }), { status: 409, message: "Agent is not running" })
    assert.deepInclude(new AgentChats.AgentDidNotAnswer({ agentId: "a1" }), { status: 504, message: "Agent did not answer in time" })
    const failed = new AgentChats.AgentChatFailed({ agentId: "a1", reason: "refused" })
    assert.deepInclude(failed, { status: 502, message: "Chat failed" })
    assert.deepStrictEqual(failed.details, { reason: "refused" })
    assert.deepInclude(new AgentChats.ChatSessionMissing({ agentId: "a1", sessionKey: "k" }), { status: 404, message: "Chat session not found" })
  })
})
