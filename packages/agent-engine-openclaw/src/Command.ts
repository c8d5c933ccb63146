/** Short-lived helper commands (npm, the OpenClaw CLI), run to completion with a deadline. */
import { spawn } from "node:child_process"
import * as Fs from "node:fs/promises"

export interface CommandResult {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Runs a command to completion, killing it after `timeoutMs`; never rejects on a non-zero exit. */
export const runCommand = (
  command: string,
  args: ReadonlyArray<string>,
  options: { readonly env: NodeJS.ProcessEnv; readonly cwd?: string; readonly timeoutMs: number; readonly input?: string }
): Promise<CommandResult> =>
  new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      env: options.env,
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
      stdio: [options.input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
      timeout: options.timeoutMs,
      killSignal: "SIGKILL"
    })
    let stdout = ""
    let stderr = ""
    child.stdout!.on("data", (chunk: Buffer) => void (stdout += chunk.toString()))
    child.stderr!.on("data", (chunk: Buffer) => void (stderr += chunk.toString()))
    child.stdin?.on("error", () => {}) // a command that exits early closes its end
    child.stdin?.end(options.input)
    child.on("error", reject)
    child.on("close", (code) => resolve({ code, stdout, stderr }))
  })

export const pathExists = (path: string) =>
  Fs.access(path).then(
    () => true,
    () => false
  )

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))
