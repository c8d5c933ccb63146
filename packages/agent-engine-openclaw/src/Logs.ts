/**
 * The gateway's log (`.openclaw/logs/openclaw.log`, where Cairn's config has OpenClaw write it), read for the API
 * (GatewayLogs in @cairn/agent-engine): from the agent's home down without following a symlink (HomeFiles.ts), in
 * whole lines, at most 1 MiB a read, with the secret values Cairn gave the agent replaced. The cursor is a byte
 * position: a follower reads on from it, and starts again from the top when the file is shorter than it (truncated).
 */
import { GatewayLogs, type LogChunk, type LogRequest } from "@cairn/agent-engine"
import * as Fs from "node:fs"
import * as HomeFiles from "./HomeFiles.ts"

const logsDir = ".openclaw/logs"
const logName = "openclaw.log"
/** How much of the file's end is read for its last lines. */
const tailBytes = 512 * 1024
/** The most one read after a cursor takes. */
const chunkBytes = 1024 * 1024

const readRange = (fd: number, start: number, end: number) => {
  const buffer = Buffer.alloc(end - start)
  let done = 0
  while (done < buffer.length) {
    const read = Fs.readSync(fd, buffer, done, buffer.length - done, start + done)
    if (read === 0) break
    done += read
  }
  return buffer.subarray(0, done)
}

export const read = (home: string, request: LogRequest, secrets: ReadonlyArray<string>): Promise<LogChunk> =>
  HomeFiles.withDir(home, logsDir, false, async (folder) => {
    const fd = folder === undefined ? undefined : HomeFiles.openFileIn(folder, logName, `${logsDir}/${logName}`)
    if (fd === undefined) return { entries: [], cursor: 0 }
    try {
      const size = Fs.fstatSync(fd).size
      const tail = "lines" in request
      const start = tail ? Math.max(0, size - tailBytes) : request.after > size ? 0 : request.after
      const bytes = readRange(fd, start, tail ? size : Math.min(size, start + chunkBytes))
      // Whole lines only: one still being written is read again, whole, next time. A line longer than a read is
      // taken as it is, so that a follower never stops at it.
      const lastNewline = bytes.lastIndexOf(0x0a)
      const whole = lastNewline === -1 ? (bytes.length === chunkBytes ? bytes.length : 0) : lastNewline + 1
      let lines = bytes.subarray(0, whole).toString("utf8").split("\n")
      if (lines.at(-1) === "") lines.pop()
      // The first line of a tail that starts mid-file is a piece of one.
      if (tail && start > 0) lines = lines.slice(1)
      if (tail) lines = lines.slice(-Math.min(request.lines, GatewayLogs.maxLogLines))
      const redact = GatewayLogs.redactor(secrets)
      const entries = lines.filter((line) => line.trim() !== "").map((line) => {
        const entry = GatewayLogs.parseLogLine(redact(line))
        // Parsing undoes JSON escapes, which may have hidden a value from the first pass.
        return { ...entry, message: redact(entry.message), source: entry.source === null ? null : redact(entry.source) }
      })
      return { entries, cursor: start + whole }
    } finally {
      Fs.closeSync(fd)
    }
  })
