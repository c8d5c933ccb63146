import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import * as _ from "../../src/simulated/MiniShell.ts"

const encoder = new TextEncoder()
const root = "/simulated/agents/a/.openclaw/workspace"
const workspace: _.ShellWorkspace = {
  files: new Map([
    ["notes.txt", encoder.encode("hello\n")],
    ["docs/b.md", encoder.encode("B")],
    ["docs/a.md", encoder.encode("A")],
    ["docs/.hidden", encoder.encode("h")],
    ["docs/deep/z.txt", encoder.encode("z")],
    ["Upper.txt", encoder.encode("U")]
  ]),
  folders: new Set(["skills/empty"])
}

const run = (command: string, options: Partial<_.ShellContext> = {}) =>
  _.run(command, {
    workspace,
    root,
    cwd: "",
    environment: { HOME: "/simulated/agents/a", SECRET: "s3cret" },
    timeoutMs: 30_000,
    maxOutputBytes: 1024,
    ...options
  })

const outputOf = (command: string, options: Partial<_.ShellContext> = {}) =>
  Effect.map(run(command, options), ({ exitCode, stderr, stdout }) => ({ stdout, stderr, exitCode }))

describe("MiniShell", () => {
  it.effect("echoes words to stdout, or to stderr with >&2, with sh's quoting", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* outputOf("echo hello   world"), { stdout: "hello world\n", stderr: "", exitCode: 0 })
      assert.deepStrictEqual(yield* outputOf("echo oops >&2"), { stdout: "", stderr: "oops\n", exitCode: 0 })
      assert.deepStrictEqual(yield* outputOf("echo oops 1>&2; echo fine"), { stdout: "fine\n", stderr: "oops\n", exitCode: 0 })
      assert.strictEqual((yield* outputOf(`echo 'a  b' "c  d" e\\ f`)).stdout, "a  b c  d e f\n")
      assert.strictEqual((yield* outputOf(`echo "$HOME" \${SECRET} $UNSET.`)).stdout, "/simulated/agents/a s3cret .\n")
      assert.strictEqual((yield* outputOf(`echo -n no newline`)).stdout, "no newline")
      assert.strictEqual((yield* outputOf(`echo '$HOME' # a comment`)).stdout, "$HOME\n")
    }))

  it.effect("exits with the code given, ending the script there; the last command's status otherwise", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* outputOf("echo before; exit 3; echo after"), { stdout: "before\n", stderr: "", exitCode: 3 })
      assert.strictEqual((yield* outputOf("exit 256")).exitCode, 0)
      assert.strictEqual((yield* outputOf("false; exit")).exitCode, 1)
      assert.strictEqual((yield* outputOf("true")).exitCode, 0)
      assert.strictEqual((yield* outputOf("false")).exitCode, 1)
      assert.strictEqual((yield* outputOf("true; false")).exitCode, 1)
      assert.strictEqual((yield* outputOf("exit nope")).exitCode, 2)
    }))

  it.effect("runs the command after && only on success, after || only on failure", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* outputOf("false && echo no"), { stdout: "", stderr: "", exitCode: 1 })
      assert.deepStrictEqual(yield* outputOf("true && echo yes"), { stdout: "yes\n", stderr: "", exitCode: 0 })
      assert.deepStrictEqual(yield* outputOf("false || echo rescued"), { stdout: "rescued\n", stderr: "", exitCode: 0 })
      assert.deepStrictEqual(yield* outputOf("echo a\necho b"), { stdout: "a\nb\n", stderr: "", exitCode: 0 })
    }))

  it.effect("answers a command it does not know as sh does: not found, exit code 127, and goes on", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* outputOf("curl http://example.com"), { stdout: "", stderr: "sh: curl: not found\n", exitCode: 127 })
      assert.deepStrictEqual(yield* outputOf("nope; echo next"), { stdout: "next\n", stderr: "sh: nope: not found\n", exitCode: 0 })
    }))

  it.effect("refuses what it does not simulate (pipes, files, subshells) as a syntax error", () =>
    Effect.gen(function*() {
      for (const command of ["echo a | cat", "echo a > file", "(echo a)", "echo a &", "echo 'open", "echo a &&"]) {
        const result = yield* outputOf(command)
        assert.strictEqual(result.exitCode, 2, command)
        assert.match(result.stderr, /^sh: /, command)
        assert.strictEqual(result.stdout, "", command)
      }
    }))

  it.effect("shows the working directory as an absolute path inside the workspace", () =>
    Effect.gen(function*() {
      assert.strictEqual((yield* outputOf("pwd")).stdout, `${root}\n`)
      assert.strictEqual((yield* outputOf("pwd", { cwd: "docs/deep" })).stdout, `${root}/docs/deep\n`)
      assert.strictEqual((yield* outputOf("printenv PWD", { cwd: "docs" })).stdout, `${root}/docs\n`)
    }))

  it.effect("reads files with cat, relative to the working directory or absolute inside the workspace", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* outputOf("cat notes.txt"), { stdout: "hello\n", stderr: "", exitCode: 0 })
      assert.strictEqual((yield* outputOf("cat a.md b.md", { cwd: "docs" })).stdout, "AB")
      assert.strictEqual((yield* outputOf("cat ../notes.txt", { cwd: "docs" })).stdout, "hello\n")
      assert.strictEqual((yield* outputOf(`cat ${root}/docs/a.md`)).stdout, "A")
      assert.deepStrictEqual(yield* outputOf("cat missing.txt"), {
        stdout: "",
        stderr: "cat: missing.txt: No such file or directory\n",
        exitCode: 1
      })
      assert.deepStrictEqual(yield* outputOf("cat docs"), { stdout: "", stderr: "cat: docs: Is a directory\n", exitCode: 1 })
      // Nothing exists outside the workspace.
      assert.strictEqual((yield* outputOf("cat ../openclaw.json")).exitCode, 1)
      assert.strictEqual((yield* outputOf("cat /etc/passwd")).exitCode, 1)
    }))

  it.effect("lists a folder one name per line, sorted by bytes, dot-files only with -a", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* outputOf("ls"), { stdout: "Upper.txt\ndocs\nnotes.txt\nskills\n", stderr: "", exitCode: 0 })
      assert.strictEqual((yield* outputOf("ls docs")).stdout, "a.md\nb.md\ndeep\n")
      assert.strictEqual((yield* outputOf("ls -a docs")).stdout, ".\n..\n.hidden\na.md\nb.md\ndeep\n")
      assert.strictEqual((yield* outputOf("ls", { cwd: "docs/deep" })).stdout, "z.txt\n")
      assert.strictEqual((yield* outputOf("ls skills/empty")).stdout, "")
      assert.strictEqual((yield* outputOf("ls notes.txt")).stdout, "notes.txt\n")
      assert.strictEqual((yield* outputOf("ls docs/deep notes.txt")).stdout, "notes.txt\n\ndocs/deep:\nz.txt\n")
      assert.deepStrictEqual(yield* outputOf("ls nowhere"), {
        stdout: "",
        stderr: "ls: cannot access 'nowhere': No such file or directory\n",
        exitCode: 2
      })
    }))

  it.effect("prints the environment's variables, failing for one that is not set", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* outputOf("printenv SECRET"), { stdout: "s3cret\n", stderr: "", exitCode: 0 })
      assert.deepStrictEqual(yield* outputOf("printenv UNSET"), { stdout: "", stderr: "", exitCode: 1 })
      assert.include((yield* outputOf("printenv")).stdout, "HOME=/simulated/agents/a\n")
    }))

  it.effect("writes N zero bytes with head -c N /dev/zero, and the first bytes of a file", () =>
    Effect.gen(function*() {
      const result = yield* run("head -c 5 /dev/zero")
      assert.deepInclude(result, { stdout: "\0\0\0\0\0", exitCode: 0, truncated: false })
      assert.strictEqual((yield* outputOf("head -c 3 notes.txt")).stdout, "hel")
      assert.strictEqual((yield* outputOf("head -c3 notes.txt")).stdout, "hel")
    }))

  it.effect("keeps at most maxOutputBytes of each stream, and says so", () =>
    Effect.gen(function*() {
      const big = yield* run("head -c 10G /dev/zero; echo err >&2", { maxOutputBytes: 16 })
      assert.strictEqual(big.stdout.length, 16)
      assert.strictEqual(big.stderr, "err\n")
      assert.isTrue(big.truncated)
      const err = yield* run("echo 0123456789abcdefXYZ >&2", { maxOutputBytes: 16 })
      assert.deepInclude(err, { stderr: "0123456789abcdef", stdout: "", truncated: true })
      const cut = yield* run("echo aéé", { maxOutputBytes: 4 })
    assert.deepInclude(cut, { stdout: "aé", truncated: true }, "a character cut in two is left out")
    const exact = yield* run("echo 0123456789abcde", { maxOutputBytes: 16 })
      assert.deepInclude(exact, { stdout: "0123456789abcde\n", truncated: false })
    }))

  it.effect("sleeps on the clock, and is killed at the timeout with what it wrote so far (137)", () =>
    Effect.gen(function*() {
      const fiber = yield* Effect.forkChild(run("echo start; sleep 2; echo end", { timeoutMs: 5_000 }))
      yield* TestClock.adjust("2 seconds")
      assert.deepInclude(yield* Fiber.join(fiber), { stdout: "start\nend\n", exitCode: 0, timedOut: false, durationMs: 2_000 })

      const killed = yield* Effect.forkChild(run("echo start; sleep 10; echo end", { timeoutMs: 1_500 }))
      yield* TestClock.adjust("1500 millis")
      assert.deepInclude(yield* Fiber.join(killed), { stdout: "start\n", exitCode: 137, timedOut: true, durationMs: 1_500 })

      const fractional = yield* Effect.forkChild(run("sleep 0.25", { timeoutMs: 1_000 }))
      yield* TestClock.adjust("250 millis")
      assert.deepInclude(yield* Fiber.join(fractional), { exitCode: 0, durationMs: 250 })
      assert.deepInclude(yield* outputOf("sleep soon"), { exitCode: 1, stderr: "sleep: invalid time interval 'soon'\n" })
    }))

  it("resolves a working directory inside the workspace, and nothing outside it or that is no folder", () => {
    assert.strictEqual(_.workingDirectory(workspace, root, undefined), "")
    assert.strictEqual(_.workingDirectory(workspace, root, "."), "")
    assert.strictEqual(_.workingDirectory(workspace, root, "docs"), "docs")
    assert.strictEqual(_.workingDirectory(workspace, root, "docs/deep/../deep/"), "docs/deep")
    assert.strictEqual(_.workingDirectory(workspace, root, `${root}/docs`), "docs")
    assert.strictEqual(_.workingDirectory(workspace, root, root), "")
    assert.strictEqual(_.workingDirectory(workspace, root, "skills/empty"), "skills/empty")
    assert.strictEqual(_.workingDirectory(workspace, root, "skills"), "skills")
    assert.strictEqual(_.workingDirectory(workspace, root, "../workspace/docs"), "docs", "out and back in, as on disk")
    for (const outside of ["..", "docs/../..", "../other", "/etc", `${root}/..`, `${root}-other`, "notes.txt", "nowhere"]) {
      assert.isUndefined(_.workingDirectory(workspace, root, outside), outside)
    }
  })
})
