import { AgentConsole, AuditStreams } from "@cairn/domain"
import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import { given } from "../DeciderSpec.ts"

const at = "2026-11-22T10:00:00.000Z"
const base = { agentId: "a1", workspaceId: "w", command: "echo hi", at }
const ran = { ...base, exitCode: 3, durationMs: 12, timedOut: false, truncated: true }

describe("an agent's console log", () => {
  it("records each run as it happened, whatever came before", () => {
    const first = new AgentConsole.ConsoleCommandRan(ran)
    given(AgentConsole.decider).when(new AgentConsole.RecordRun(ran)).then([first])
    given(AgentConsole.decider, [first, first]).when(new AgentConsole.RecordRun({ ...ran, cwd: "sub" }))
      .then([new AgentConsole.ConsoleCommandRan({ ...ran, cwd: "sub" })])
  })

  it("records a command that did not run, with why", () => {
    const notRun = { ...base, cwd: "../other", reason: "cwd-outside-workspace" as const }
    given(AgentConsole.decider).when(new AgentConsole.RecordNotRun(notRun)).then([new AgentConsole.ConsoleCommandNotRun(notRun)])
  })

  it("is part of the agent's audit trail, after the agent's own stream", () => {
    const streams = AuditStreams.auditStreams("a1")
    assert.strictEqual(streams[0], "agent-a1")
    assert.include(streams, AgentConsole.stream("a1"))
    assert.strictEqual(new Set(streams).size, streams.length)
  })
})

describe("a console request", () => {
  const valid = (input: { command: unknown; cwd?: unknown }) => AgentConsole.validateRequest({ command: input.command, cwd: input.cwd })

  it("needs a non-empty command", () => {
    for (const command of [undefined, null, "", "   ", 42, ["ls"], { cmd: "ls" }]) {
      const result = valid({ command })
      assert.isTrue(Result.isFailure(result), JSON.stringify(command))
      assert.strictEqual(Result.isFailure(result) && result.failure.message, "Invalid command")
      assert.strictEqual(Result.isFailure(result) && result.failure.status, 400)
    }
  })

  it("refuses what no process can be given: NUL, or a command over 64 KiB", () => {
    assert.isTrue(Result.isFailure(valid({ command: "echo a\0b" })))
    assert.isTrue(Result.isFailure(valid({ command: "x".repeat(AgentConsole.maxCommandBytes + 1) })))
    assert.isTrue(Result.isSuccess(valid({ command: "x".repeat(AgentConsole.maxCommandBytes) })))
  })

  it("takes cwd when it is a non-empty string, and leaves it out when absent", () => {
    assert.deepStrictEqual(valid({ command: "pwd" }), Result.succeed({ command: "pwd" }))
    assert.deepStrictEqual(valid({ command: "pwd", cwd: null }), Result.succeed({ command: "pwd" }))
    assert.deepStrictEqual(valid({ command: "pwd", cwd: "sub/dir" }), Result.succeed({ command: "pwd", cwd: "sub/dir" }))
    for (const cwd of ["", 7, ["a"], "a\0b"]) assert.isTrue(Result.isFailure(valid({ command: "pwd", cwd })), JSON.stringify(cwd))
  })
})
