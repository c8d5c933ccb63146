/**
 * The README's snippets run as a reader runs them: every ```sh / ```bash block, in order, in one bash session in
 * the repository's folder, against a fresh server (simulated engine, a temporary data directory, a free port that
 * `CAIRN_URL` names); a ```ts block is saved to a file and run with the project's Node, as the README says. Each
 * command must succeed (`set -e`, and curl fails on an HTTP error). A block preceded by
 * `<!-- readme-test: skip -->` (or fenced as ```sh no-test) is left out: installing, starting a server, the tests.
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import { once } from "node:events"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { embeddedStorePass, startServer, waitUntilServing } from "../src/testing/index.ts"

const root = fileURLToPath(new URL("../../../", import.meta.url))
const dataDir = mkdtempSync(join(tmpdir(), "cairn-readme-"))
// Inside the repository, so that a ts snippet's imports (pinata, viem) resolve as they do for a reader.
const snippets = mkdtempSync(join(root, ".readme-test-"))
afterAll(() => {
  rmSync(dataDir, { recursive: true, force: true })
  rmSync(snippets, { recursive: true, force: true })
})

interface Block {
  readonly line: number
  readonly language: string
  readonly text: string
}

/** The fenced blocks of a Markdown text that are to run, with the line each starts on. */
const runnableBlocks = (markdown: string): Array<Block> => {
  const lines = markdown.split("\n")
  const blocks: Array<Block> = []
  for (let i = 0; i < lines.length; i++) {
    const fence = /^```(\S*)(.*)$/.exec(lines[i]!)
    if (fence === null) continue
    const end = lines.findIndex((line, j) => j > i && line.startsWith("```"))
    const previous = lines.slice(0, i).reverse().find((line) => line.trim() !== "")
    const skipped = previous?.trim() === "<!-- readme-test: skip -->" || fence[2]!.includes("no-test")
    if (["sh", "bash", "ts"].includes(fence[1]!) && !skipped) {
      blocks.push({ line: i + 1, language: fence[1]!, text: lines.slice(i + 1, end).join("\n") })
    }
    i = end
  }
  return blocks
}

/** One bash script: each block between markers, so a failure names its block. */
const script = (blocks: ReadonlyArray<Block>) =>
  [
    "set -eo pipefail",
    // An HTTP error is a failed command, as it would be a failed step for the reader; its body is still printed.
    "curl() { command curl --fail-with-body -sS \"$@\"; }",
    ...blocks.flatMap((block, index) => {
      const body = block.language === "ts"
        ? (() => {
          const file = join(snippets, `snippet-${index}.ts`)
          writeFileSync(file, block.text)
          return `KEY=$KEY CAIRN=$CAIRN node_modules/.bin/node ${file}`
        })()
        : block.text
      // Replies end without a newline: each marker starts a line of its own.
      return [`printf '\\n@@ start ${index}\\n'`, body, `printf '\\n@@ done ${index}\\n'`]
    })
  ].join("\n")

describe.runIf(embeddedStorePass)("the README", () => {
  it("has shell snippets that run in order against a fresh server", async () => {
    const blocks = runnableBlocks(readFileSync(join(root, "README.md"), "utf8"))
    assert.isAtLeast(blocks.length, 8, "the README's snippets were found")
    const server = await startServer({ DATA_DIR: dataDir, ENGINE: "simulated", SIMULATED_START_DELAY: "100 millis" })
    try {
      await waitUntilServing(server, 180_000)
      const bash = spawn("bash", ["-c", script(blocks)], {
        cwd: root,
        env: { ...process.env, CAIRN_URL: server.url, DATA_DIR: dataDir },
        stdio: ["ignore", "pipe", "pipe"]
      })
      let output = ""
      bash.stdout.on("data", (chunk) => (output += chunk))
      bash.stderr.on("data", (chunk) => (output += chunk))
      const [code] = await once(bash, "exit")
      const done = [...output.matchAll(/^@@ done (\d+)$/gm)].length
      const failed = blocks[done]
      assert.strictEqual(
        code,
        0,
        failed === undefined ? output : `the block at README.md line ${failed.line} failed:\n${failed.text}\n--- output ---\n${output}`
      )
      assert.strictEqual(done, blocks.length)
    } finally {
      server.child.kill("SIGTERM")
    }
    assert.strictEqual(await server.exited, 0, server.output())
  }, 300_000)
})

/**
 * The agents snippet's helpers where the happy path above cannot take them, run as the README defines them against a
 * stand-in server that answers as Cairn does when a gateway fails to start: a create answering 500 `Gateway failed
 * to start` with the agent (docs/api.md), whose history holds the `AgentFailedToStart` with the log's tail; and an
 * agent that stays `starting` (`sleep` made instant, so the 3-minute bound passes at once).
 */
describe.runIf(embeddedStorePass)("the README's agent helpers", () => {
  it("print the failure and its reason for a create that answers 500, and give up on an agent that never runs", async () => {
    const readme = readFileSync(join(root, "README.md"), "utf8")
    const block = runnableBlocks(readme).find((b) => b.text.includes("create_agent()"))
    assert.isDefined(block, "the agents snippet defines create_agent")
    const lines = block!.text.split("\n")
    const definitions = lines.slice(0, lines.findIndex((line) => line.startsWith("AGENT="))).join("\n")
    assert.notInclude(definitions, "curl -X", "only the helpers run here, nothing that changes the server")

    const logTail = "gateway: listen EADDRINUSE 127.0.0.1:18789"
    const stand = createServer((request, response) => {
      const reply = (status: number, body: unknown) => {
        response.writeHead(status, { "content-type": "application/json" })
        response.end(JSON.stringify(body))
      }
      if (request.method === "POST" && request.url === "/v0/agents") {
        return reply(500, { error: "Gateway failed to start", agent: { agentId: "agt_failed", status: "not_running" } })
      }
      if (request.url === "/v0/agents/agt_failed/events") {
        return reply(200, { events: [{ type: "AgentCreated", data: {} }, { type: "AgentFailedToStart", data: { logTail } }] })
      }
      if (request.url === "/v0/agents/agt_slow") return reply(200, { agent: { agentId: "agt_slow", status: "starting" } })
      reply(404, { error: "Agent not found" })
    })
    await new Promise<void>((resolve) => stand.listen(0, "127.0.0.1", resolve))
    const url = `http://127.0.0.1:${(stand.address() as AddressInfo).port}`
    // Not spawnSync: the stand-in answers from this very process.
    const bash = async (commands: string) => {
      const child = spawn("bash", ["-c", `${definitions}\n${commands}`], {
        cwd: root,
        env: { ...process.env, CAIRN: url, AUTH: "authorization: Bearer k" },
        stdio: ["ignore", "pipe", "pipe"]
      })
      let stdout = ""
      let stderr = ""
      child.stdout.on("data", (chunk) => (stdout += chunk))
      child.stderr.on("data", (chunk) => (stderr += chunk))
      await once(child, "exit")
      return { stdout, stderr }
    }
    try {
      const failed = await bash(`AGENT=$(create_agent '{"name":"helper"}') && wait_running $AGENT; echo "status=$? agent=$AGENT"`)
      assert.include(failed.stdout, "status=1 agent=\n", "the create fails, and no id is taken from the 500")
      assert.include(failed.stderr, "the agent was not created: Gateway failed to start (agent agt_failed, not running)")
      assert.include(failed.stderr, logTail, "the reason, from the agent's history")

      const slow = await bash(`sleep() { :; }\nwait_running agt_slow; echo "status=$?"`)
      assert.include(slow.stdout, "status=1")
      assert.include(slow.stderr, "agent agt_slow is still starting after 3 minutes")
    } finally {
      stand.close()
    }
  }, 180_000)
})
