/**
 * `npm run bench:memory`: whether the server's memory stays flat under a long mixed load. It starts the real Node
 * server (`apps/server-node`, embedded PGlite in a temporary directory, or a fresh Postgres database when
 * DATABASE_URL is set), then runs `BENCH_REQUESTS` (200,000) requests in rounds of 20,000 through autocannon in
 * its own process: health probes, file listings and gets, signature lookups, agent listings and unknown routes, with
 * a fresh API key each round (so the memo of verified tokens sees new keys). After each round it reads the
 * server's resident memory from /proc, and prints it with the growth from the end of warm-up (the first two
 * rounds) to the end: flat means every cache that grows with requests is bounded.
 */
import { cli, newApiUser, startServer, waitUntilServing } from "@cairn/server-node/testing"
import { execFile } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import type { LoadSpec } from "./LoadSpec.ts"

const total = Number(process.env["BENCH_REQUESTS"] ?? 200_000)
const perRound = 20_000
const dataDir = mkdtempSync(join(tmpdir(), "cairn-bench-memory-"))

const rssMB = (pid: number) => {
  const status = readFileSync(`/proc/${pid}/status`, "utf8")
  return Math.round(Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) / 1024)
}

const load = (spec: LoadSpec) =>
  new Promise<{ rps: number; total: number; non2xx: number; errors: number }>((resolve, reject) => {
    const file = join(dataDir, `load-${Math.random().toString(36).slice(2)}.json`)
    writeFileSync(file, JSON.stringify(spec))
    execFile(process.execPath, [fileURLToPath(new URL("load.ts", import.meta.url)), file], { encoding: "utf8", maxBuffer: 1 << 20 }, (error, stdout) =>
      error ? reject(error) : resolve(JSON.parse(stdout.trim().split("\n").at(-1)!)))
  })

const server = await startServer({ DATA_DIR: dataDir, ENGINE: "simulated" })
try {
  await waitUntilServing(server)
  const ops = { url: server.url, dataDir }
  const files = newApiUser(ops, { workspace: "memory", agentLimit: 5, scopes: "org:files:read,org:files:write,org:agents" })
  const form = new FormData()
  form.append("file", new Blob(["memory bench\n"]), "m.txt")
  form.append("network", "public")
  const uploaded = await fetch(`${server.url}/v3/files`, { method: "POST", headers: { authorization: `Bearer ${files.token}` }, body: form })
  const file = ((await uploaded.json()) as { data: { id: string; cid: string } }).data
  await files.call("POST", "/v0/agents", { name: "memory" })

  const rows: Array<Record<string, string | number>> = [{ round: "start", requests: 0, "rss MB": rssMB(server.child.pid!) }]
  let done = 0
  for (let round = 1; done < total; round++) {
    // A new key each round: the verified-token memo must stay bounded as keys come and go.
    const key = cli(ops, "key", "create", "--workspace", files.workspaceId, "--user", `u${round}`, "--scopes", "org:files:read,org:agents")
    const items = [
      { path: "/healthz" },
      { path: "/v3/files/public?limit=10" },
      { path: `/v3/files/public/${file.id}` },
      { path: `/v3/files/public/signature/${file.cid}` },
      { path: "/v0/agents" },
      { path: `/no/such/route/${round}` },
      { path: `/v3/files/public?cid=${file.cid}` }
    ]
    const amount = Math.min(perRound, total - done)
    const result = await load({ url: server.url, method: "GET", headers: { authorization: `Bearer ${key}` }, items, amount })
    // The signature lookup is a 404 (nothing signed) and the unknown route one too: both expected.
    done += result.total
    rows.push({ round, requests: done, "rss MB": rssMB(server.child.pid!), "req/s": result.rps, errors: result.errors })
  }
  const warm = Number(rows[Math.min(2, rows.length - 1)]!["rss MB"])
  const end = Number(rows.at(-1)!["rss MB"])
  console.table(rows)
  console.log(`RSS after warm-up (round 2) ${warm} MB, at the end ${end} MB: ${(((end - warm) / warm) * 100).toFixed(1)}% over ${(done - 2 * perRound).toLocaleString("en")} requests`)
} finally {
  server.child.kill("SIGTERM")
  await server.exited
  rmSync(dataDir, { recursive: true, force: true })
}
