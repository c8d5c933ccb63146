/**
 * Test fixtures: real git repositories made with the `git` CLI in temporary directories, and a git smart-HTTP
 * server on loopback that serves them (`git upload-pack --stateless-rpc`), so remote clones run offline.
 */
import { execFileSync, spawn } from "node:child_process"
import * as Fs from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"

const run = (cwd: string, ...args: Array<string>) =>
  execFileSync("git", args, {
    cwd,
    encoding: "utf8",
    env: { ...process.env, GIT_AUTHOR_NAME: "Ada", GIT_AUTHOR_EMAIL: "ada@example.com", GIT_COMMITTER_NAME: "Ada", GIT_COMMITTER_EMAIL: "ada@example.com" }
  }).trim()

export interface Repository {
  readonly dir: string
  /** Writes files (path → text), commits them all, and returns the commit id. */
  readonly commit: (files: Readonly<Record<string, string>>, message?: string) => string
  readonly git: (...args: Array<string>) => string
}

/** A fresh repository on branch `main`. */
export const makeRepository = (): Repository => {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "cairn-template-repo-"))
  run(dir, "init", "-q", "-b", "main")
  return {
    dir,
    git: (...args) => run(dir, ...args),
    commit: (files, message = "update") => {
      for (const [path, text] of Object.entries(files)) {
        Fs.mkdirSync(Path.dirname(Path.join(dir, path)), { recursive: true })
        Fs.writeFileSync(Path.join(dir, path), text)
      }
      run(dir, "add", "-A")
      run(dir, "commit", "-q", "--allow-empty", "-m", message)
      return run(dir, "rev-parse", "HEAD")
    }
  }
}

const pktLine = (text: string) => `${(text.length + 4).toString(16).padStart(4, "0")}${text}`

/** Serves `root/<name>` repositories at `http://127.0.0.1:<port>/<name>` over git's smart HTTP protocol (fetch only). */
export const serveRepositories = async (root: string): Promise<{ readonly url: string; readonly close: () => Promise<void> }> => {
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://git")
    const match = /^\/(.+?)\/(info\/refs|git-upload-pack)$/.exec(url.pathname)
    const repo = match?.[1] === undefined ? undefined : Path.join(root, match[1])
    if (match === null || repo === undefined || !Fs.existsSync(repo)) {
      response.writeHead(404).end()
      return
    }
    if (match[2] === "info/refs") {
      if (url.searchParams.get("service") !== "git-upload-pack") {
        response.writeHead(403).end()
        return
      }
      response.writeHead(200, { "content-type": "application/x-git-upload-pack-advertisement", "cache-control": "no-cache" })
      response.write(`${pktLine("# service=git-upload-pack\n")}0000`)
      const advertise = spawn("git", ["upload-pack", "--stateless-rpc", "--advertise-refs", repo])
      advertise.stdout.pipe(response)
      return
    }
    response.writeHead(200, { "content-type": "application/x-git-upload-pack-result", "cache-control": "no-cache" })
    const upload = spawn("git", ["upload-pack", "--stateless-rpc", repo])
    request.pipe(upload.stdin)
    upload.stdout.pipe(response)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}
