/**
 * The admin CLI against a real server process, as an operator runs it: what it prints and how it exits when the
 * server refuses (1), when the command line cannot work (2), when no server answers (3); and audit trails.
 */
import * as Bundle from "@cairn/server-node/Bundle"
import { build } from "@cairn/server-node/BundleBuild"
import { type Cleanups, freePort, freshDatabase, ioSettled, newApiUser, type ServerProcess, startServer, waitUntilServing } from "@cairn/server-node/testing"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const main = fileURLToPath(new URL("../src/main.ts", import.meta.url))
const dataDir = mkdtempSync(join(tmpdir(), "cairn-admin-cli-"))
let server: ServerProcess

// Each CLI run is a process that loads all of Cairn: seconds each, a minute on a loaded machine.
const timeout = 600_000

const cli = (args: ReadonlyArray<string>, env: Record<string, string> = {}) => {
  const result = spawnSync(process.execPath, [main, ...args], {
    env: { ...process.env, CAIRN_URL: server.url, DATA_DIR: dataDir, ...env },
    encoding: "utf8"
  })
  assert.isNull(server.child.exitCode ?? server.child.signalCode, `the server stopped:\n${server.output().slice(-2000)}`)
  return { code: result.status, stdout: result.stdout, stderr: result.stderr }
}

/** The line a command that talks to the server prints first on stderr: which server, and why that one. */
const announced = (url: string, why = "CAIRN_URL") => `cairn: server ${url} (${why})\n`

/**
 * One failed run: its exit code and its one `cairn: …` message, never empty and never a stack trace (`stderr`
 * without the line that names the server, which a run that reached for one prints first: `server` is that line).
 */
const failure = (args: ReadonlyArray<string>, env: Record<string, string> = {}) => {
  const run = cli(args, env)
  assert.notMatch(run.stderr, /^cairn: *$/m, "the message is never empty")
  assert.notInclude(run.stderr, "    at ", "no stack trace")
  assert.strictEqual(run.stdout, "")
  const server = /^cairn: server .*\n/.exec(run.stderr)?.[0]
  return { ...run, server, stderr: server === undefined ? run.stderr : run.stderr.slice(server.length) }
}

// On Postgres, a database of its own: `verify` checks every block's signature, and on CI's shared database the other
// tests' servers seal with keys of their own.
const cleanups: Cleanups = []
const database = process.env["DATABASE_URL"] === undefined ? {} : { DATABASE_URL: freshDatabase(process.env["DATABASE_URL"], cleanups) }

beforeAll(async () => {
  server = await startServer({ ...database, DATA_DIR: dataDir, ENGINE: "simulated", SIMULATED_START_DELAY: "100 millis" })
  await waitUntilServing(server)
}, timeout)

afterAll(async () => {
  if (server.child.exitCode === null) {
    server.child.kill("SIGTERM")
    await server.exited
  }
  rmSync(dataDir, { recursive: true, force: true })
  for (const cleanup of cleanups.reverse()) await cleanup()
})

describe("the admin CLI when a request fails", () => {
  it("prints the server's error string and status for an unknown workspace, key or agent, and exits 1", () => {
    const workspace = failure(["key", "create", "--workspace", "nope", "--user", "ada", "--scopes", "org:files:read"])
    assert.strictEqual(workspace.code, 1)
    assert.strictEqual(workspace.server, announced(server.url))
    assert.strictEqual(workspace.stderr, "cairn: Workspace not found (HTTP 404 from POST /admin/keys)\n")

    const key = failure(["key", "revoke", "no-such-key"])
    assert.strictEqual(key.code, 1)
    assert.strictEqual(key.stderr, "cairn: Key not found (HTTP 404 from POST /admin/keys/no-such-key/revoke)\n")

    const agent = failure(["audit", "--agent", "no-such-agent"])
    assert.strictEqual(agent.code, 1)
    assert.strictEqual(agent.stderr, "cairn: Agent not found (HTTP 404 from GET /admin/agents/no-such-agent/events)\n")
  }, timeout)

  it("prints the validation failure for a bad scope, and exits 1", () => {
    const scope = failure(["key", "create", "--workspace", "w", "--user", "ada", "--scopes", "org:everything"])
    assert.strictEqual(scope.code, 1)
    assert.match(scope.stderr, /^cairn: Validation failed: .*scopes.* \(HTTP 400 from POST \/admin\/keys\)\n$/)
  }, timeout)

  it("says the admin token was refused, and where the CLI reads it from, for a wrong ADMIN_TOKEN, and exits 1", () => {
    const wrong = failure(["workspace", "create", "--name", "Nope"], { ADMIN_TOKEN: "not-the-admin-token" })
    assert.strictEqual(wrong.code, 1)
    assert.match(wrong.stderr, /^cairn: Unauthorized.* \(HTTP 401 from POST \/admin\/workspaces\)\n/)
    assert.include(wrong.stderr, "ADMIN_TOKEN, or DATA_DIR/admin-token")
  }, timeout)

  it("names the URL it tried and how to start the server when none answers, and exits 3", async () => {
    const down = `http://127.0.0.1:${await freePort()}`
    const run = failure(["workspace", "create", "--name", "Nope"], { CAIRN_URL: down })
    assert.strictEqual(run.code, 3)
    assert.strictEqual(run.server, announced(down))
    assert.include(run.stderr, `cairn: cannot connect to the Cairn server at ${down} (ECONNREFUSED)`)
    assert.include(run.stderr, "Start it with `npm start`")
  }, timeout)

  it("exits 2 for a command line that cannot work: unknown command or flag, a bad value, a missing choice", () => {
    const unknown = cli(["bogus"])
    assert.strictEqual(unknown.code, 2)
    assert.include(unknown.stderr, "Unknown subcommand \"bogus\"")

    const flag = cli(["key", "create", "--bad"])
    assert.strictEqual(flag.code, 2)
    assert.include(flag.stderr, "--bad")

    // A missing flag: the help goes to stderr with the error, and stdout stays empty, so `KEY=$(… | tail -n 1)`
    // can never take a help line for a key.
    const missing = cli(["key", "create", "--workspace", "w", "--user", "ada"])
    assert.strictEqual(missing.code, 2)
    assert.strictEqual(missing.stdout, "")
    assert.include(missing.stderr, "USAGE")
    assert.include(missing.stderr, "--scopes")

    const expires = failure(["key", "create", "--workspace", "w", "--user", "ada", "--scopes", "org:agents", "--expires", "5y"])
    assert.strictEqual(expires.code, 2)
    assert.strictEqual(expires.stderr, "cairn: --expires takes a duration such as 90s, 30m, 1h or 7d, not \"5y\"\n")

    const audit = failure(["audit"])
    assert.strictEqual(audit.code, 2)
    assert.strictEqual(audit.stderr, "cairn: audit takes one of --agent <id> and --file <cid>\n")
    const at = failure(["audit", "--file", "bafy", "--at", "2026-11-28T10:00:00Z"])
    assert.strictEqual(at.code, 2)
    assert.strictEqual(at.stderr, "cairn: --at goes with --agent <id>\n")

    const url = failure(["key", "revoke", "k"], { CAIRN_URL: "ftp://example" })
    assert.strictEqual(url.code, 2)
    assert.include(url.stderr, "CAIRN_URL must be the server's http(s) address")

    // A command named without its subcommand, or none at all: help not asked for, so a usage error.
    for (const args of [["key"], ["workspace"], []]) {
      const bare = cli(args)
      assert.strictEqual(bare.code, 2, args.join(" "))
      assert.strictEqual(bare.stdout, "", args.join(" "))
      assert.include(bare.stderr, "USAGE", args.join(" "))
      assert.include(bare.stderr, "SUBCOMMANDS", args.join(" "))
    }

    for (const args of [["--help"], ["key", "--help"], ["key", "create", "--help"]]) {
      const help = cli(args)
      assert.strictEqual(help.code, 0, args.join(" "))
      assert.include(help.stdout, "USAGE", "help asked for stays on stdout")
      assert.strictEqual(help.stderr, "", args.join(" "))
    }
  }, timeout)
})

describe("which server the admin CLI talks to", () => {
  it("says it on stderr, in one line before its output: CAIRN_URL, or the default when it is not in the environment", () => {
    const created = cli(["workspace", "create", "--name", "Announced"])
    assert.strictEqual(created.code, 0, created.stderr)
    assert.strictEqual(created.stderr, announced(server.url))
    assert.match(created.stdout, /^Created workspace Announced \(free, agent limit 1\)\n[0-9a-f-]{36}\n$/, "stdout is the output alone")

    // `CAIRN_URL=…` without `export` is a shell variable the CLI never sees: it says it uses the default instead.
    const { CAIRN_URL: _, ...inherited } = process.env
    const unexported = spawnSync("bash", ["-c", `CAIRN_URL=${server.url}; "$0" "$1" workspace create --name Unexported`, process.execPath, main], {
      env: { ...inherited, DATA_DIR: dataDir },
      encoding: "utf8"
    })
    assert.match(unexported.stderr, /^cairn: server http:\/\/127\.0\.0\.1:3000 \(the default: CAIRN_URL is not set\)\n/)
    assert.notInclude(unexported.stdout, "Created workspace")
  }, timeout)
})

describe("./cairn, the CLI's own entry point", () => {
  const cairn = fileURLToPath(new URL("../../../cairn", import.meta.url))
  const run = (args: ReadonlyArray<string>, env: Record<string, string> = {}) => {
    const result = spawnSync(cairn, args, { env: { ...process.env, CAIRN_URL: server.url, DATA_DIR: dataDir, ...env }, encoding: "utf8" })
    return { code: result.status, stdout: result.stdout, stderr: result.stderr }
  }

  it("answers from its bundle as from its sources: output, the server's line, usage errors, exit codes", async () => {
    const bundleDir = mkdtempSync(join(tmpdir(), "cairn-cli-bundle-"))
    try {
      await build(bundleDir, Bundle.cli)
      // What start.mjs will find: the bundle just built, current.
      const saved = { dir: process.env["CAIRN_CLI_BUNDLE_DIR"], on: process.env["CAIRN_BUNDLE"] }
      Object.assign(process.env, { CAIRN_CLI_BUNDLE_DIR: bundleDir, CAIRN_BUNDLE: "on" })
      assert.include(Bundle.fresh(Bundle.cli), bundleDir)
      Object.assign(process.env, { CAIRN_CLI_BUNDLE_DIR: saved.dir ?? "", CAIRN_BUNDLE: saved.on ?? "off" })
      if (saved.dir === undefined) delete process.env["CAIRN_CLI_BUNDLE_DIR"]
      for (const env of [{ CAIRN_BUNDLE: "off" }, { CAIRN_BUNDLE: "on", CAIRN_CLI_BUNDLE_DIR: bundleDir }]) {
        const what = JSON.stringify(env)
        const created = run(["workspace", "create", "--name", "Bundled", "--plan", "pro"], env)
        assert.strictEqual(created.code, 0, `${what}: ${created.stderr}`)
        assert.strictEqual(created.stderr, announced(server.url), what)
        const workspaceId = created.stdout.trim().split("\n").at(-1)!
        const key = run(["key", "create", "--workspace", workspaceId, "--user", "ada", "--scopes", "org:agents"], env)
        assert.strictEqual(key.code, 0, `${what}: ${key.stderr}`)
        assert.match(key.stdout.trim().split("\n").at(-1)!, /^eyJ[\w-]+\.[\w-]+\.[\w-]+$/, what)
        const missing = run(["key", "create", "--workspace", workspaceId, "--user", "ada"], env)
        assert.strictEqual(missing.code, 2, what)
        assert.strictEqual(missing.stdout, "", what)
        assert.include(missing.stderr, "--scopes", what)
        const refused = run(["audit", "--agent", "no-such-agent"], env)
        assert.strictEqual(refused.code, 1, what)
        assert.include(refused.stderr, "cairn: Agent not found (HTTP 404 from GET /admin/agents/no-such-agent/events)", what)
      }
    } finally {
      rmSync(bundleDir, { recursive: true, force: true })
    }
  }, timeout)
})

describe("audit trails through the CLI", () => {
  const ops = { get url() { return server.url }, dataDir }

  it("prints an agent's history with --agent, as the older `audit agent` does", async () => {
    const { call } = newApiUser(ops, { workspace: "Audited", agentLimit: 1, scopes: "org:agents" })
    const created = await call("POST", "/v0/agents", { name: "audited" })
    assert.strictEqual(created.status, 201, JSON.stringify(created.body))
    const agentId = created.body.agent.agentId as string
    // On a loaded machine the create answers `starting`; the history this checks is complete once it runs.
    while ((await call("GET", `/v0/agents/${agentId}`)).body.agent.status !== "running") {
      await new Promise((resolve) => setTimeout(resolve, 100))
    }

    const audit = cli(["audit", "--agent", agentId])
    assert.strictEqual(audit.code, 0, audit.stderr)
    assert.match(audit.stdout, new RegExp(`^\\S+Z\\tagent-${agentId}#1@\\d+:\\d+\\tAgentCreated\\tby ada$`, "m"))
    assert.match(audit.stdout, /\tAgentStarted\tby engine$/m)
    assert.strictEqual(cli(["audit", "agent", agentId]).stdout, audit.stdout)
  }, timeout)

  it("prints a file's history by its CID with --file: uploads in every workspace, renames, deletes; or one file by its id", async () => {
    const upload = async (token: string, name: string) => {
      const form = new FormData()
      form.append("file", new Blob(["audited content\n"], { type: "text/plain" }), name)
      form.append("network", "public")
      await ioSettled()
      const response = await fetch(`${server.url}/v3/files`, { method: "POST", headers: { authorization: `Bearer ${token}` }, body: form })
      assert.strictEqual(response.status, 200, await response.clone().text())
      return ((await response.json()) as { data: { id: string; cid: string } }).data
    }
    const first = newApiUser(ops, { workspace: "Files A", scopes: "org:files:read,org:files:write" })
    const second = newApiUser(ops, { workspace: "Files B", scopes: "org:files:read,org:files:write" })
    const a = await upload(first.token, "a.txt")
    const b = await upload(second.token, "b.txt")
    assert.strictEqual(a.cid, b.cid)
    assert.strictEqual((await second.call("PUT", `/v3/files/public/${b.id}`, { name: "renamed.txt" })).status, 200)
    assert.strictEqual((await first.call("DELETE", `/v3/files/public/${a.id}`)).status, 200)

    const audit = cli(["audit", "--file", a.cid])
    assert.strictEqual(audit.code, 0, audit.stderr)
    // Each line's log position (`#version@position`) is left out: the order of the lines is what is checked.
    const lines = audit.stdout.trim().split("\n").map((line) => line.split("\t").slice(1).join("\t").replace(/@\d+:\d+\t/, "\t"))
    // In log order: each upload and the delete write two streams in one transaction (in either order within it).
    const steps = [
      [`file-${a.id}#1\tFileUploaded\tby ada`, `cid-public-${a.cid}#1\tCidUploaded\tby ada`],
      [`file-${b.id}#1\tFileUploaded\tby ada`, `cid-public-${a.cid}#2\tCidUploaded\tby ada`],
      [`file-${b.id}#2\tFileUpdated\tby ada`],
      [`file-${a.id}#2\tFileDeleted\tby ada`, `cid-public-${a.cid}#3\tCidReleased\tby ada`]
    ]
    assert.strictEqual(lines.length, 7, audit.stdout)
    let at = 0
    for (const step of steps) {
      assert.sameMembers(lines.slice(at, at + step.length), step, audit.stdout)
      at += step.length
    }

    const one = cli(["audit", "--file", b.id])
    assert.strictEqual(one.code, 0, one.stderr)
    assert.match(one.stdout, new RegExp(`^\\S+Z\\tfile-${b.id}#1@\\d+:\\d+\\tFileUploaded\\tby ada\\n\\S+Z\\tfile-${b.id}#2@\\d+:\\d+\\tFileUpdated\\tby ada\\n$`))

    const unknown = failure(["audit", "--file", "bafkreinothere"])
    assert.strictEqual(unknown.code, 1)
    assert.strictEqual(unknown.stderr, "cairn: File not found (HTTP 404 from GET /admin/files/bafkreinothere/events)\n")
  }, timeout)
})

describe("verify through the CLI", () => {
  it("checks the log the server sealed in the background: every event, where the chain began, ok", async () => {
    // A workspace and its key: events just recorded.
    newApiUser({ url: server.url, dataDir }, { workspace: "Verified", scopes: "org:agents" })
    // The sealer's rounds are half a second apart at most under load, a few seconds when idle.
    let run = cli(["verify"])
    for (let tries = 0; tries < 40 && !/\t0 recorded since the last block$/m.test(run.stdout); tries++) {
      await new Promise((resolve) => setTimeout(resolve, 250))
      run = cli(["verify"])
    }
    assert.strictEqual(run.code, 0, run.stdout + run.stderr)
    assert.match(run.stdout, /^chain\tintroduced \S+Z\tbackfilled through (\d+:\d+|0)$/m)
    assert.match(run.stdout, /^checked\t\d+ events in \d+ blocks\t0 recorded since the last block$/m)
    assert.match(run.stdout, /^ok$/m)
  }, timeout)
})
