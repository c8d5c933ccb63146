/**
 * Agents isolated with bubblewrap (src/Sandbox.ts), proven from inside console commands on the real adapter: two
 * agent homes in a data directory that also holds Cairn's `secrets.key` and database files, on the stand-in engine
 * (no OpenClaw install needed: a console command needs no gateway). Skipped, with the reason, only where bubblewrap
 * cannot run (CI installs it).
 */
import { AgentEngine, type ExecRequest } from "@cairn/agent-engine"
import { freshAgent, withLogs } from "@cairn/agent-engine/testing"
import { afterAll, assert, describe, it, layer } from "@effect/vitest"
import { Effect, Exit, Layer, Redacted } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { OpenClawAgentEngine } from "../src/index.ts"
import * as Sandbox from "../src/Sandbox.ts"
import { bwrapRuns, onGatewayPorts, processesUnder, sandboxSkipReason, waitUntil } from "../src/testing/index.ts"

const root = Fs.mkdtempSync(Path.join(Os.tmpdir(), "cairn-sandbox-"))
afterAll(() => Fs.rmSync(root, { recursive: true, force: true }))

const fakeNpm = Path.join(import.meta.dirname, "fixtures", "fake-npm.mjs")
/** The repository: the stand-in engine's gateway imports its sources from here. */
const repository = Path.resolve(import.meta.dirname, "..", "..", "..")

/** Whether bubblewrap can make a sandbox here at all (user namespaces allowed). */
/** A data directory laid out as Cairn's: the secrets key, the embedded database, agents' homes, the engines. */
const dataDirOf = (name: string) => {
  const dir = Path.join(root, name)
  Fs.mkdirSync(Path.join(dir, "pg"), { recursive: true })
  Fs.writeFileSync(Path.join(dir, "secrets.key"), "master-key-material\n", { mode: 0o600 })
  Fs.writeFileSync(Path.join(dir, "pg", "PG_VERSION"), "17\n", { mode: 0o600 })
  Fs.writeFileSync(Path.join(dir, "pg", "base-table"), "rows of the event store\n", { mode: 0o600 })
  return dir
}

/** An engine on gateway ports no other test process holds while it lives. */
const engineLayer = (name: string, extra: Partial<OpenClawAgentEngine.Options> = {}) =>
  onGatewayPorts(4, (basePort) => OpenClawAgentEngine.layer({ dataDir: dataDirOf(name), npmPath: fakeNpm, basePort, stopGrace: "2 seconds", ...extra }))

const provisioned = Effect.gen(function*() {
  const agentId = freshAgent("sandboxed")
  yield* (yield* AgentEngine).provision(agentId, { version: "2026.10.2", gatewayToken: Redacted.make(`token-${agentId}`) })
  return agentId
})

const exec = (agentId: string, command: string, options: Partial<ExecRequest> = {}) =>
  Effect.gen(function*() {
    const engine = yield* AgentEngine
    return yield* engine.exec(agentId, { command, timeoutMs: 20_000, maxOutputBytes: 1024 * 1024, ...options })
  })

const homeOf = (dataDir: string, agentId: string) => Path.join(dataDir, "agents", agentId)
const workspaceOf = (dataDir: string, agentId: string) => Path.join(homeOf(dataDir, agentId), ".openclaw", "workspace")

if (bwrapRuns) {
  describe("Sandbox: what a console command can see", () => {
    const dataDir = Path.join(root, "isolation")
    layer(Layer.fresh(engineLayer("isolation")), { excludeTestServices: true, timeout: "60 seconds" })((it) => {
      it.effect("cannot read or list another agent's workspace, Cairn's secrets key or its database files", () =>
        Effect.gen(function*() {
          const engine = yield* AgentEngine
          const [a, b] = [yield* provisioned, yield* provisioned]
          yield* engine.writeWorkspaceFiles(b, [{ path: "notes/private.md", content: new TextEncoder().encode("b's private notes") }])
          yield* engine.writeWorkspaceFiles(a, [{ path: "mine.md", content: new TextEncoder().encode("a's own notes") }])
          const bWorkspace = workspaceOf(dataDir, b)
          const probes = {
            own: `cat ${workspaceOf(dataDir, a)}/mine.md`,
            otherFile: `cat ${bWorkspace}/notes/private.md`,
            otherList: `ls ${bWorkspace}`,
            otherHome: `ls ${homeOf(dataDir, b)}`,
            agents: `ls -a ${Path.join(dataDir, "agents")}`,
            dataDir: `ls -a ${dataDir}`,
            secretsKey: `cat ${Path.join(dataDir, "secrets.key")}`,
            database: `ls ${Path.join(dataDir, "pg")}`,
            databaseFile: `cat ${Path.join(dataDir, "pg", "base-table")}`,
            shadow: "cat /etc/shadow",
            rootHome: "ls /root",
            // The project Cairn runs from: only the path to the Node binary and the parent watch shows.
            project: `cat ${repository}/package.json`,
            projectSources: `ls ${repository}/packages/agent-engine-openclaw/test`
          }
          const seen: Record<string, { readonly stdout: string; readonly exitCode: number }> = {}
          for (const [name, command] of Object.entries(probes)) {
            const result = yield* exec(a, command)
            seen[name] = { stdout: result.stdout.trim(), exitCode: result.exitCode }
          }
          assert.deepStrictEqual(seen["own"], { stdout: "a's own notes", exitCode: 0 })
          for (const name of ["otherFile", "otherList", "otherHome", "secretsKey", "database", "databaseFile", "shadow", "rootHome", "project", "projectSources"]) {
            assert.notStrictEqual(seen[name]!.exitCode, 0, `${name}: ${probes[name as keyof typeof probes]} worked: ${seen[name]!.stdout}`)
            assert.strictEqual(seen[name]!.stdout, "", name)
          }
          // Of the data directory, only the mount points leading to this agent's home and the engines show, empty.
          assert.deepStrictEqual(seen["agents"], { stdout: [".", "..", a].join("\n"), exitCode: 0 })
          assert.deepStrictEqual(seen["dataDir"], { stdout: [".", "..", "agents", "engines"].join("\n"), exitCode: 0 })
          // Nothing of it lies anywhere else in the sandbox either.
          const search = yield* exec(a, "grep -rl 'master-key-material\\|rows of the event store' / --exclude-dir=proc --exclude-dir=usr --exclude-dir=sys 2>/dev/null; true")
          assert.strictEqual(search.stdout, "")
        }))

      it.effect("writes only in its home and its own /tmp, and sees none of the host's processes", () =>
        Effect.gen(function*() {
          const agentId = yield* provisioned
          const home = homeOf(dataDir, agentId)
          const result = yield* exec(
            agentId,
            [
              `echo kept > ${home}/written-by-command`,
              "echo private > /tmp/scratch",
              "for target in /usr/cairn-test /etc/cairn-test /cairn-test; do",
              "  if (echo x > $target) 2>/dev/null; then echo \"wrote $target\"; fi",
              "done",
              // As root outside, the sandbox's user owns /proc/sys through the user namespace: it must be read only.
              "(echo sandbox > /proc/sys/kernel/domainname) 2>/dev/null && echo 'wrote /proc/sys'",
              "id -u; id -un",
              "ls /proc | grep -c '^[0-9]'"
            ].join("\n")
          )
          const [uid, user, processes] = result.stdout.trim().split("\n")
          assert.deepStrictEqual([uid, user], ["1000", "agent"], result.stdout + result.stderr)
          assert.isAtMost(Number(processes), 6, "the sandbox sees processes outside its PID namespace")
          assert.strictEqual(Fs.readFileSync(Path.join(home, "written-by-command"), "utf8"), "kept\n")
          // Above the home lie only the sandbox's own mount points: what is written there (where they lie in its
          // private /tmp, as here) never reaches the data directory.
          yield* exec(agentId, `echo x > ${dataDir}/cairn-test; echo x > ${Path.join(dataDir, "agents")}/cairn-test`)
          for (const path of ["/usr/cairn-test", "/etc/cairn-test", "/cairn-test", `${dataDir}/cairn-test`, `${dataDir}/agents/cairn-test`]) {
            assert.isFalse(Fs.existsSync(path), `${path} was written`)
          }
          // Each command has a /tmp of its own, gone with it.
          assert.strictEqual((yield* exec(agentId, "cat /tmp/scratch")).exitCode, 1)
        }))

      it.effect("runs the gateway in the sandbox: other namespaces, and the home as its only writable place", () =>
        Effect.gen(function*() {
          const engine = yield* AgentEngine
          const agentId = yield* provisioned
          yield* engine.start(agentId)
          const home = homeOf(Path.join(root, "isolation-gateway"), agentId)
          const ours = (ns: string) => Fs.readlinkSync(`/proc/self/ns/${ns}`)
          // The gateway itself (node), not bubblewrap: its working directory is the home, seen from here too.
          const under = processesUnder(Fs.realpathSync(home))
          const gateway = under.find((process) => process.name !== "bwrap")
          assert.isDefined(gateway, `no gateway process runs in the home: ${JSON.stringify(under)}`)
          for (const ns of ["pid", "user", "mnt", "ipc", "uts"]) {
            assert.notStrictEqual(Fs.readlinkSync(`/proc/${gateway!.pid}/ns/${ns}`), ours(ns), `the gateway shares the ${ns} namespace`)
          }
          // A network of its own where Cairn can give one (as root, with slirp4netns: AgentNetwork.ts), as in CI.
          if (process.getuid?.() === 0) {
            assert.notStrictEqual(Fs.readlinkSync(`/proc/${gateway!.pid}/ns/net`), ours("net"), "the gateway shares the host's network")
          }
          const limits = Fs.readFileSync(`/proc/${gateway!.pid}/limits`, "utf8")
          assert.match(limits, new RegExp(`Max processes\\s+${Sandbox.defaultLimits.processes}\\s+${Sandbox.defaultLimits.processes}`))
          assert.match(limits, new RegExp(`Max file size\\s+${Sandbox.defaultLimits.fileSizeBytes}\\s`))
          yield* engine.stop(agentId)
        }).pipe(Effect.provide(Layer.fresh(engineLayer("isolation-gateway", { sandboxReadOnly: [repository] })))))
    })
  })

  describe("Sandbox: limits", () => {
    const limits = { processes: 64, fileSizeBytes: 16 * 1024 * 1024, memoryBytes: 256 * 1024 * 1024, tmpBytes: 8 * 1024 * 1024 }
    const dataDir = Path.join(root, "limits")
    layer(Layer.fresh(engineLayer("limits", { sandboxLimits: limits, agentLimits: { pids: limits.processes } })), { excludeTestServices: true, timeout: "60 seconds" })((it) => {
      it.effect("contains a fork bomb: the sandbox stops at its process limit", () =>
        Effect.gen(function*() {
          const agentId = yield* provisioned
          // The bomb's processes, seen from here: they all work in the agent's workspace.
          const workspace = `${Fs.realpathSync(Path.join(homeOf(dataDir, agentId), ".."))}/${agentId}/.openclaw/workspace`
          const bomb = () => processesUnder(workspace).length
          let bombPeak = 0
          let worstLag = 0
          let last = Date.now()
          const ticker = setInterval(() => {
            const now = Date.now()
            worstLag = Math.max(worstLag, now - last - 50)
            last = now
            bombPeak = Math.max(bombPeak, bomb())
          }, 50)
          // Every process of the bomb forks in a loop, and when a fork is refused it says so once, with how many
          // processes it sees, and sleeps: so the bomb grows to its limit and stays there. (With the classic
          // `bomb | bomb &` a refused fork ends its shell, the bomb can die out again in a moment, and what a sampler
          // saw of it depended on the scheduler: on a loaded machine it saw 7 processes.) The shell, with builtins
          // only, waits until it has seen the bomb near its limit and a refusal, however long a loaded machine takes
          // (the command's timeout bounds it), then shows the first refusal and exits, ending the sandbox.
          const full = Math.ceil(limits.processes * 0.75)
          const result = yield* exec(
            agentId,
            "perl -e 'sub count { opendir(my $d, \"/proc\"); scalar grep { /^\\d+$/ } readdir($d) } " +
              "while (1) { defined(fork()) or do { print STDERR \"Cannot fork ($!) with \" . count() . \" processes\\n\"; sleep } }' " +
              "2>/tmp/refused & max=0; " +
              `until [ $max -ge ${full} ] && [ -s /tmp/refused ]; do set -- /proc/[0-9]*; [ $# -gt $max ] && max=$#; done; ` +
              "read -r refused < /tmp/refused; echo \"$refused\" >&2; echo $max",
            { timeoutMs: 40_000 }
          ).pipe(Effect.ensuring(Effect.sync(() => clearInterval(ticker))))
          // The most processes the shell saw at once in the sandbox.
          const seenInside = Number(result.stdout.trim())
          if (process.env["TEST_LOGS"] === "print") {
            console.log(
              `fork bomb: at most ${bombPeak} of its processes seen from here (limit ${limits.processes}; ${seenInside} ` +
                `listed inside), worst timer lag ${worstLag} ms, ${result.durationMs} ms, exit ${result.exitCode}`
            )
          }
          assert.isAtLeast(seenInside, full, `the bomb did not go off: ${result.stdout} ${result.stderr.slice(0, 500)}`)
          // The limit held: forks were refused there, not sooner, and no more of its processes than the limit were
          // ever alive at once.
          const refusedAt = Number(/Cannot fork \(.*\) with (\d+) processes/.exec(result.stderr)?.[1])
          assert.isAtLeast(refusedAt, full, result.stderr)
          assert.isAtMost(refusedAt, limits.processes)
          assert.isAtMost(bombPeak, limits.processes + 2)
          // Every process of the bomb is gone with the command (its PID namespace went).
          yield* waitUntil(() => bomb() === 0, "the bomb's processes are gone", 15_000)
        }))

      it.effect("stops a 10 GB write at the file size limit", () =>
        Effect.gen(function*() {
          const agentId = yield* provisioned
          const result = yield* exec(agentId, "head -c 10000000000 /dev/zero > big; echo \"exit $?\"", { timeoutMs: 20_000 })
          // SIGXFSZ (25) ended head: 128 + 25.
          assert.strictEqual(result.stdout.trim(), "exit 153", result.stderr)
          assert.strictEqual(Fs.statSync(Path.join(workspaceOf(dataDir, agentId), "big")).size, limits.fileSizeBytes)
          Fs.rmSync(Path.join(workspaceOf(dataDir, agentId), "big"))
        }))

      it.effect("refuses a process more memory than its limit, and a /tmp larger than its size", () =>
        Effect.gen(function*() {
          const agentId = yield* provisioned
          const small = yield* exec(agentId, "awk 'BEGIN { s = sprintf(\"%10000000s\", \"\"); print length(s) }'")
          assert.strictEqual(small.stdout.trim(), "10000000", small.stderr)
          const large = yield* exec(agentId, "awk 'BEGIN { s = sprintf(\"%400000000s\", \"\"); print length(s) }'")
          assert.notStrictEqual(large.exitCode, 0)
          assert.strictEqual(large.stdout, "")
          const tmp = yield* exec(agentId, "head -c 12000000 /dev/zero > /tmp/fill; echo \"exit $?\"")
          assert.strictEqual(tmp.stdout.trim(), "exit 1")
          assert.include(tmp.stderr, "No space left on device")
        }))
    })
  })

  describe("Sandbox: modes", () => {
    it.live("SANDBOX=off runs commands as plain processes: then an agent can read Cairn's secrets key", () =>
      Effect.gen(function*() {
        const logged = yield* withLogs(Effect.gen(function*() {
          const agentId = yield* provisioned
          return yield* exec(agentId, `cat ${Path.join(root, "off", "secrets.key")}`)
        }).pipe(Effect.provide(Layer.fresh(engineLayer("off", { sandbox: "off" })))))
        assert.strictEqual(logged.value.stdout, "master-key-material\n")
        assert.isTrue(logged.messages.some((line) => line.startsWith("SANDBOX=off: agents run WITHOUT isolation")), logged.messages.join("\n"))
      }))

    it.live("without bubblewrap, `auto` builds the engine but refuses to start agents or run commands, naming the fix", () =>
      Effect.gen(function*() {
        const path = process.env["PATH"]
        process.env["PATH"] = "/nonexistent"
        const logged = yield* withLogs(Effect.gen(function*() {
          const engine = yield* AgentEngine
          const agentId = yield* provisioned
          const start = yield* Effect.flip(engine.start(agentId))
          const command = yield* Effect.flip(exec(agentId, "true"))
          return { start, command, state: (yield* engine.status(agentId)).state }
        }).pipe(
          Effect.provide(Layer.fresh(engineLayer("missing", { nodePath: process.execPath }))),
          Effect.ensuring(Effect.sync(() => void (process.env["PATH"] = path)))
        ))
        const built = logged.value
        assert.isTrue(logged.messages.some((line) => line.includes("NO AGENT CAN START") && line.includes("bwrap is not installed")), logged.messages.join("\n"))
        assert.strictEqual(built.start._tag, "GatewayDidNotStart")
        if (built.start._tag === "GatewayDidNotStart") {
          assert.include(built.start.logTail, "bwrap is not installed")
          assert.include(built.start.logTail, "SANDBOX=off")
        }
        assert.strictEqual(built.command._tag, "ExecFailed")
        assert.include(built.command.message, "install bubblewrap")
        assert.strictEqual(built.state, "crashed")
      }))

    it.live("`required` refuses to build the engine when bubblewrap cannot run", () =>
      Effect.gen(function*() {
        const exit = yield* Effect.exit(Sandbox.make({ mode: "required", dataDir: root, readOnly: [], bwrapPath: "/nonexistent/bwrap" }))
        assert.isTrue(Exit.isFailure(exit))
        assert.include(String(Exit.isFailure(exit) ? exit.cause : ""), "SANDBOX=required")
        // `auto` says loudly, once, that no agent can start, and how to fix it.
        const logged = yield* withLogs(Sandbox.make({ mode: "auto", dataDir: root, readOnly: [], bwrapPath: "/nonexistent/bwrap" }))
        assert.isTrue(logged.messages.some((line) => line.includes("NO AGENT CAN START") && line.includes("SANDBOX=off")), logged.messages.join("\n"))
        const auto = logged.value
        assert.strictEqual(auto.state._tag, "Unavailable")
        assert.throws(() => auto.launch({ home: root, cwd: root, argv: ["true"], env: {}, dieWithParent: true, gracefulTerm: false }), /SANDBOX=off/)
      }))
  })
} else {
  describe.skip(`Sandbox (${sandboxSkipReason})`, () => {
    it.skip("needs bubblewrap", () => {})
  })
}
