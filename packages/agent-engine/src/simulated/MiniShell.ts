/**
 * The simulated engine's console: a tiny, deterministic `sh -c` over an agent's in-memory workspace. It understands
 * the vocabulary the AgentEngine contract keeps to, and answers everything else as sh answers a command it cannot
 * find (`sh: <word>: not found`, exit code 127):
 *
 *   echo WORDS [>&2] · exit [N] · pwd · cat PATH… · ls [PATH…] · printenv [NAME…] · sleep SECONDS ·
 *   head -c N (/dev/zero | PATH) · true · false
 *
 * joined by `;`, newlines, `&&` or `||`, with sh's quoting ('…', "…", \) and `$NAME` / `${NAME}` expansion. Paths are
 * relative to the working directory or absolute inside the workspace; there is nothing outside it. The shell only
 * reads the workspace. `sleep` waits on Effect's Clock, and a command still running at `timeoutMs` is killed (exit
 * code 137) with the output it wrote so far; each stream keeps `maxOutputBytes`.
 */
import { Clock, Duration, Effect } from "effect"
import { completeUtf8Length, type ExecResult } from "../WorkspaceOperations.ts"

/** The workspace as the shell sees it: files by relative path, and folders that exist with no file in them. */
export interface ShellWorkspace {
  readonly files: ReadonlyMap<string, Uint8Array>
  readonly folders: ReadonlySet<string>
}

export interface ShellContext {
  readonly workspace: ShellWorkspace
  /** The workspace's absolute path (what `pwd` shows at its top). */
  readonly root: string
  /** The working directory, relative to the workspace (`""` for the workspace itself); see `workingDirectory`. */
  readonly cwd: string
  readonly environment: Readonly<Record<string, string>>
  readonly timeoutMs: number
  readonly maxOutputBytes: number
}

/** An absolute path's segments with `.` and `..` resolved, as the filesystem resolves them (`/..` is `/`). */
const absoluteSegments = (path: string): Array<string> => {
  const out: Array<string> = []
  for (const segment of path.split("/")) {
    if (segment === "" || segment === ".") continue
    if (segment === "..") out.pop()
    else out.push(segment)
  }
  return out
}

/**
 * A path as seen from `cwd` (relative to the workspace), relative to the workspace; undefined when it leads outside
 * (a relative path may climb out and back in, as on disk).
 */
export const resolvePath = (root: string, cwd: string, path: string): string | undefined => {
  const absolute = absoluteSegments(path.startsWith("/") ? path : `${root}/${cwd}/${path}`)
  const base = absoluteSegments(root)
  if (absolute.length < base.length || base.some((segment, index) => absolute[index] !== segment)) return undefined
  return absolute.slice(base.length).join("/")
}

export const isDirectory = (workspace: ShellWorkspace, path: string): boolean => {
  if (path === "" || workspace.folders.has(path)) return true
  for (const folder of workspace.folders) if (folder.startsWith(`${path}/`)) return true
  for (const file of workspace.files.keys()) if (file.startsWith(`${path}/`)) return true
  return false
}

/**
 * The working directory a request names (relative to the workspace, or absolute inside it), relative to the
 * workspace; undefined when it leads outside or is not a directory there.
 */
export const workingDirectory = (workspace: ShellWorkspace, root: string, cwd: string | undefined): string | undefined => {
  if (cwd === undefined || cwd === "") return ""
  const resolved = resolvePath(root, "", cwd)
  return resolved !== undefined && isDirectory(workspace, resolved) ? resolved : undefined
}

/** The names directly inside a folder, sorted as `ls` sorts them in the C locale (by bytes). */
const entries = (workspace: ShellWorkspace, folder: string): Array<string> => {
  const prefix = folder === "" ? "" : `${folder}/`
  const names = new Set<string>()
  for (const path of [...workspace.files.keys(), ...workspace.folders]) {
    if (path.startsWith(prefix) && path.length > prefix.length) names.add(path.slice(prefix.length).split("/")[0]!)
  }
  return [...names].sort(byBytes)
}

const encoder = new TextEncoder()
const byBytes = (a: string, b: string) => {
  const [x, y] = [encoder.encode(a), encoder.encode(b)]
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i]! - y[i]!
  return x.length - y.length
}

/** One output stream, keeping its first `limit` bytes. */
class Stream {
  private readonly chunks: Array<Uint8Array> = []
  private kept = 0
  truncated = false
  private readonly limit: number
  constructor(limit: number) {
    this.limit = limit
  }
  write(data: string | Uint8Array) {
    this.writeBytes(typeof data === "string" ? encoder.encode(data) : data)
  }
  /** `length` bytes of zeroes, without making them when they are past the limit. */
  writeZeroes(length: number) {
    const room = Math.max(0, this.limit - this.kept)
    if (length > room) this.truncated = true
    const kept = Math.min(length, room)
    if (kept > 0) this.chunks.push(new Uint8Array(kept))
    this.kept += kept
  }
  private writeBytes(bytes: Uint8Array) {
    const room = Math.max(0, this.limit - this.kept)
    if (bytes.length > room) this.truncated = true
    const kept = bytes.subarray(0, room)
    if (kept.length > 0) this.chunks.push(kept.slice())
    this.kept += kept.length
  }
  /** The kept bytes as UTF-8; a character the cap cut in two is left out rather than shown broken (as the real adapter does). */
  text() {
    const all = new Uint8Array(this.kept)
    let offset = 0
    for (const chunk of this.chunks) {
      all.set(chunk, offset)
      offset += chunk.length
    }
    return new TextDecoder().decode(this.truncated ? all.subarray(0, completeUtf8Length(all)) : all)
  }
}

/** A simple command: its words, and whether `>&2` sends its output to stderr. */
interface Simple {
  readonly words: ReadonlyArray<string>
  readonly toStderr: boolean
  /** How it joins the command before it. */
  readonly after: ";" | "&&" | "||"
}

class ParseError {
  readonly message: string
  constructor(message: string) {
    this.message = message
  }
}

/** Splits a script into simple commands, applying sh's quoting and `$NAME` expansion. */
const parse = (script: string, environment: Readonly<Record<string, string>>): Array<Simple> | ParseError => {
  const commands: Array<Simple> = []
  let words: Array<string> = []
  let word: string | undefined
  let toStderr = false
  let after: Simple["after"] = ";"
  let i = 0

  const endWord = () => {
    if (word !== undefined) words.push(word)
    word = undefined
  }
  const endCommand = (next: Simple["after"]): ParseError | undefined => {
    endWord()
    if (words.length === 0) {
      if (next !== ";" || after !== ";") return new ParseError(`Syntax error: "${next}" unexpected`)
      after = next
      return undefined
    }
    commands.push({ words, toStderr, after })
    words = []
    toStderr = false
    after = next
    return undefined
  }
  const expand = (): string => {
    // At a `$`: `${NAME}`, `$NAME`, or a lone `$`.
    const braced = /^\$\{([A-Za-z_][A-Za-z0-9_]*)\}/.exec(script.slice(i))
    const plain = /^\$([A-Za-z_][A-Za-z0-9_]*)/.exec(script.slice(i))
    const match = braced ?? plain
    if (match === null) {
      i++
      return "$"
    }
    i += match[0].length
    return environment[match[1]!] ?? ""
  }

  while (i < script.length) {
    const char = script[i]!
    if (char === " " || char === "\t") {
      endWord()
      i++
    } else if (char === "\n" || char === ";") {
      const error = endCommand(";")
      if (error !== undefined) return error
      i++
    } else if (script.startsWith("&&", i) || script.startsWith("||", i)) {
      const error = endCommand(script.startsWith("&&", i) ? "&&" : "||")
      if (error !== undefined) return error
      i += 2
    } else if (char === "#" && word === undefined) {
      while (i < script.length && script[i] !== "\n") i++
    } else if (char === ">" || char === "<" || char === "|" || char === "&" || char === "(" || char === ")" || char === "`") {
      // Only `>&2` (and `1>&2`) is simulated; pipes, files, subshells and background jobs are not.
      const fd = word === "1" || word === "2" ? word : undefined
      const redirect = /^>&([12])/.exec(script.slice(i))
      if (redirect === null) return new ParseError(`${JSON.stringify(char)} is not simulated`)
      if (fd !== undefined) word = undefined
      endWord()
      if ((fd ?? "1") === "1" && redirect[1] === "2") toStderr = true
      if (fd === "2" && redirect[1] === "1") return new ParseError("2>&1 is not simulated")
      i += redirect[0].length
    } else if (char === "'") {
      const end = script.indexOf("'", i + 1)
      if (end < 0) return new ParseError("Syntax error: Unterminated quoted string")
      word = (word ?? "") + script.slice(i + 1, end)
      i = end + 1
    } else if (char === "\"") {
      let text = ""
      i++
      while (i < script.length && script[i] !== "\"") {
        if (script[i] === "\\" && i + 1 < script.length && "\"\\$`\n".includes(script[i + 1]!)) {
          if (script[i + 1] !== "\n") text += script[i + 1]
          i += 2
        } else if (script[i] === "$") {
          text += expand()
        } else {
          text += script[i]
          i++
        }
      }
      if (i >= script.length) return new ParseError("Syntax error: Unterminated quoted string")
      word = (word ?? "") + text
      i++
    } else if (char === "\\") {
      if (script[i + 1] !== "\n" && i + 1 < script.length) word = (word ?? "") + script[i + 1]
      i += 2
    } else if (char === "$") {
      word = (word ?? "") + expand()
    } else {
      word = (word ?? "") + char
      i++
    }
  }
  const error = endCommand(";")
  if (error !== undefined) return error
  if (after !== ";") return new ParseError("Syntax error: end of file unexpected")
  return commands
}

/** `exit N` ends the whole script. */
/** What `exit` without a number carries: the script exits with the status of the command before it. */
const lastStatus = -1

class Exit {
  readonly code: number
  constructor(code: number) {
    this.code = code
  }
}

/** A byte count with head's suffixes (K, M, G: powers of 1024; KB, MB, GB: of 1000). */
const byteCount = (text: string): number | undefined => {
  const match = /^(\d+)(K|M|G|KB|MB|GB|k)?$/.exec(text)
  if (match === null) return undefined
  const unit = { K: 1024, k: 1024, M: 1024 ** 2, G: 1024 ** 3, KB: 1000, MB: 1000 ** 2, GB: 1000 ** 3 }[match[2] ?? ""] ?? 1
  return Number(match[1]) * unit
}

/** Seconds as `sleep` takes them: a decimal number with an optional s, m, h or d. */
const sleepMillis = (text: string): number | undefined => {
  const match = /^(\d+(?:\.\d*)?|\.\d+)([smhd]?)$/.exec(text)
  if (match === null) return undefined
  const unit = { "": 1, s: 1, m: 60, h: 3600, d: 86400 }[match[2]!]!
  return Math.round(Number(match[1]) * unit * 1000)
}

/** Runs `script` as `sh -c` would in the simulated workspace. Never fails: every outcome is a result. */
export const run = (script: string, context: ShellContext): Effect.Effect<ExecResult> =>
  Effect.gen(function*() {
    const started = yield* Clock.currentTimeMillis
    const stdout = new Stream(context.maxOutputBytes)
    const stderr = new Stream(context.maxOutputBytes)
    const pwd = context.cwd === "" ? context.root : `${context.root}/${context.cwd}`
    const environment: Readonly<Record<string, string>> = { ...context.environment, PWD: pwd }
    const { workspace } = context

    const simple = (command: Simple): Effect.Effect<number, Exit> =>
      Effect.suspend(() => {
        const out = command.toStderr ? stderr : stdout
        const [name, ...args] = command.words
        const resolve = (path: string) => resolvePath(context.root, context.cwd, path)
        switch (name) {
          case "true":
            return Effect.succeed(0)
          case "false":
            return Effect.succeed(1)
          case "echo": {
            const newline = args[0] !== "-n"
            out.write(`${(newline ? args : args.slice(1)).join(" ")}${newline ? "\n" : ""}`)
            return Effect.succeed(0)
          }
          case "exit": {
            if (args[0] === undefined) return Effect.fail(new Exit(lastStatus))
            if (!/^\d+$/.test(args[0])) {
              stderr.write(`sh: exit: Illegal number: ${args[0]}\n`)
              return Effect.fail(new Exit(2))
            }
            return Effect.fail(new Exit(Number(args[0]) & 255))
          }
          case "pwd":
            out.write(`${pwd}\n`)
            return Effect.succeed(0)
          case "cat": {
            let status = 0
            for (const arg of args) {
              if (arg === "/dev/null") continue
              const path = resolve(arg)
              const content = path === undefined ? undefined : workspace.files.get(path)
              if (content !== undefined) out.write(content)
              else {
                status = 1
                const folder = path !== undefined && isDirectory(workspace, path)
                stderr.write(`cat: ${arg}: ${folder ? "Is a directory" : "No such file or directory"}\n`)
              }
            }
            return Effect.succeed(status)
          }
          case "ls": {
            const options = args.filter((arg) => arg.startsWith("-") && arg !== "-")
            const all = options.some((option) => option.includes("a"))
            const unknown = options.join("").replace(/[-1a]/g, "")
            if (unknown !== "") {
              stderr.write(`ls: invalid option -- '${unknown[0]}'\n`)
              return Effect.succeed(2)
            }
            const operands = args.filter((arg) => !options.includes(arg))
            const targets = operands.length === 0 ? ["."] : operands
            let status = 0
            const files: Array<string> = []
            const folders: Array<readonly [string, string]> = []
            for (const target of targets) {
              const path = resolve(target)
              if (path !== undefined && workspace.files.has(path)) files.push(target)
              else if (path !== undefined && isDirectory(workspace, path)) folders.push([target, path])
              else {
                status = 2
                stderr.write(`ls: cannot access '${target}': No such file or directory\n`)
              }
            }
            const blocks: Array<string> = []
            if (files.length > 0) blocks.push(files.sort(byBytes).map((file) => `${file}\n`).join(""))
            for (const [target, path] of folders.sort(([a], [b]) => byBytes(a, b))) {
              const names = [...(all ? [".", ".."] : []), ...entries(workspace, path).filter((entry) => all || !entry.startsWith("."))]
              const heading = targets.length > 1 ? `${target}:\n` : ""
              blocks.push(heading + names.map((entry) => `${entry}\n`).join(""))
            }
            out.write(blocks.join("\n"))
            return Effect.succeed(status)
          }
          case "printenv": {
            if (args.length === 0) {
              out.write(Object.entries(environment).map(([key, value]) => `${key}=${value}\n`).join(""))
              return Effect.succeed(0)
            }
            let status = 0
            for (const variable of args) {
              const value = environment[variable]
              if (value === undefined) status = 1
              else out.write(`${value}\n`)
            }
            return Effect.succeed(status)
          }
          case "sleep": {
            if (args.length === 0) {
              stderr.write("sleep: missing operand\n")
              return Effect.succeed(1)
            }
            const millis = args.map(sleepMillis)
            const invalid = args.find((_, index) => millis[index] === undefined)
            if (invalid !== undefined) {
              stderr.write(`sleep: invalid time interval '${invalid}'\n`)
              return Effect.succeed(1)
            }
            const total = millis.reduce<number>((sum, value) => sum + value!, 0)
            return Effect.as(Effect.sleep(Duration.millis(total)), 0)
          }
          case "head": {
            let count: number | undefined
            const operands: Array<string> = []
            for (let index = 0; index < args.length; index++) {
              const arg = args[index]!
              if (arg === "-c") count = byteCount(args[++index] ?? "")
              else if (arg.startsWith("-c")) count = byteCount(arg.slice(2))
              else operands.push(arg)
            }
            if (count === undefined) {
              stderr.write("head: only `head -c N FILE` is simulated\n")
              return Effect.succeed(1)
            }
            let status = 0
            for (const operand of operands) {
              if (operand === "/dev/zero") {
                out.writeZeroes(count)
                continue
              }
              const path = resolve(operand)
              const content = path === undefined ? undefined : workspace.files.get(path)
              if (content === undefined) {
                status = 1
                const folder = path !== undefined && isDirectory(workspace, path)
                stderr.write(`head: ${folder ? `error reading '${operand}': Is a directory` : `cannot open '${operand}' for reading: No such file or directory`}\n`)
              } else {
                out.write(content.subarray(0, count))
              }
            }
            return Effect.succeed(status)
          }
          default:
            stderr.write(`sh: ${name}: not found\n`)
            return Effect.succeed(127)
        }
      })

    const commands = parse(script, environment)
    let status = 0
    const body: Effect.Effect<number> = commands instanceof ParseError
      ? Effect.sync(() => {
        stderr.write(`sh: ${commands.message}\n`)
        return 2
      })
      : Effect.gen(function*() {
        for (const command of commands) {
          if ((command.after === "&&" && status !== 0) || (command.after === "||" && status === 0)) continue
          status = yield* simple(command)
        }
        return status
      }).pipe(Effect.catch((exit) => Effect.succeed(exit.code === lastStatus ? status : exit.code)))

    const outcome = yield* Effect.raceFirst(
      Effect.map(body, (exitCode) => ({ exitCode, timedOut: false })),
      Effect.as(Effect.sleep(Duration.millis(context.timeoutMs)), { exitCode: 137, timedOut: true })
    )
    const finished = yield* Clock.currentTimeMillis
    return {
      stdout: stdout.text(),
      stderr: stderr.text(),
      exitCode: outcome.exitCode,
      truncated: stdout.truncated || stderr.truncated,
      timedOut: outcome.timedOut,
      durationMs: finished - started
    }
  })
