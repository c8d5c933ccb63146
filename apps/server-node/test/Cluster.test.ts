/**
 * Two Cairn nodes as one (decision 0028): two real server processes on one fresh Postgres database, each with its own
 * data directory and `CAIRN_INTERNAL_URL`, sharing keys and a snapshot blockstore. An agent runs on node A; requests
 * for it that land on node B reach A (a restart that stays on A, devices, a streamed upload and its download, a
 * WebSocket to its app's domain), and when A is killed with SIGKILL, B adopts it from its latest snapshot (the
 * uploaded file is there again) while an agent with no snapshot is recorded `not_running` with the reason. Runs in
 * the Postgres pass only (DATABASE_URL): the embedded database is one node's by nature. Then the same behind a real
 * load balancer: nginx round-robin over two nodes, an agent's whole life through it, its node killed mid-way.
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import { type ChildProcess, spawn } from "node:child_process"
import { once } from "node:events"
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import * as Http from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { WebSocket } from "ws"
import * as Cluster from "../src/testing/Cluster.ts"
import { freePort, newApiUser, type ServerProcess, waitUntil } from "../src/testing/index.ts"

const databaseUrl = process.env["DATABASE_URL"]
const appsDomain = "apps.test"
const fixture = join(import.meta.dirname, "fixtures", "app-server.mjs")
const cleanups: Cluster.Cleanups = []

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup()
})


/** Waits until `check` gives something, with every server's output on a timeout. */
const waitFor = <A>(what: string, servers: ReadonlyArray<ServerProcess>, check: () => Promise<A | undefined>, timeoutMs = 180_000) =>
  waitUntil(what, check, { output: () => servers.map((s) => s.output().slice(-4_000)).join("\n----\n"), timeoutMs })

/** Two nodes on one fresh database (src/testing/Cluster.ts). */
const startTwoNodes = (extra: Record<string, string> = {}) => Cluster.startTwoNodes(databaseUrl!, cleanups, extra)

/** A request to `server` with a Host of our choosing (fetch cannot set one). */
const viaHost = (server: ServerProcess, host: string, path: string, body?: string, headers: Http.OutgoingHttpHeaders = {}) =>
  new Promise<{ status: number; text: string }>((resolve, reject) => {
    const url = new URL(server.url)
    const request = Http.request({ host: url.hostname, port: url.port, path, method: body === undefined ? "GET" : "POST", headers: { host, ...headers }, agent: false }, (response) => {
      let text = ""
      response.on("data", (chunk) => (text += chunk))
      response.on("end", () => resolve({ status: response.statusCode!, text }))
    })
    request.on("error", reject)
    request.end(body)
  })

/** A request body that arrives in pieces, as a client streaming an upload sends it. */
const streamed = (text: string, pieceBytes = 64 * 1024) => {
  const bytes = new TextEncoder().encode(text)
  let offset = 0
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (offset >= bytes.length) return controller.close()
      controller.enqueue(bytes.subarray(offset, offset + pieceBytes))
      offset += pieceBytes
    }
  })
}

describe.runIf(databaseUrl !== undefined)("two nodes on one Postgres act as one", () => {
  it("forwards an agent's requests to its node, and fails over to the other node after kill -9", { timeout: 600_000 }, async () => {
    const { a, b } = await startTwoNodes({ APPS_DOMAIN: appsDomain })
    const servers = [a.server, b.server]

    const user = newApiUser({ url: a.server.url, dataDir: a.dataDir }, { workspace: "Cluster", scopes: "org:agents", agentLimit: 10 })
    const call = (server: ServerProcess, method: string, path: string, body?: unknown) =>
      fetch(`${server.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${user.token}` },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      }).then(async (response) => ({ status: response.status, text: await response.text() }))
    const json = async (server: ServerProcess, method: string, path: string, body?: unknown) => {
      const reply = await call(server, method, path, body)
      return { status: reply.status, body: reply.text === "" ? undefined : JSON.parse(reply.text) }
    }
    const statusOn = async (server: ServerProcess, agentId: string) => (await json(server, "GET", `/v0/agents/${agentId}`)).body?.agent?.status
    const startedOn = async (server: ServerProcess, agentId: string): Promise<ReadonlyArray<string>> =>
      ((await json(server, "GET", `/v0/agents/${agentId}/events`)).body?.events ?? [])
        .filter((e: { type: string }) => e.type === "AgentStarted")
        .map((e: { data: { node?: string } }) => e.data.node ?? "")
    const createAgent = async (name: string) => {
      const created = await json(a.server, "POST", "/v0/agents", { name })
      assert.strictEqual(created.status, 201, JSON.stringify(created.body))
      const agentId = created.body.agent.agentId as string
      await waitFor(`${name} runs`, servers, async () => (await statusOn(a.server, agentId)) === "running" ? true : undefined)
      return agentId
    }

    const agentId = await createAgent("kept")
    const bare = await createAgent("bare")
    assert.deepStrictEqual(await startedOn(b.server, agentId), [a.node])

    // Devices: only the agent's node's engine knows them; asked of B, answered by A.
    const devices = await json(b.server, "GET", `/v0/agents/${agentId}/devices`)
    assert.strictEqual(devices.status, 200, JSON.stringify(devices.body))
    assert.deepStrictEqual(devices.body, { pending: [], paired: [] })

    // A restart asked of B runs on A, where the gateway is (without forwarding it would move the agent to B).
    const restarted = await json(b.server, "POST", `/v0/agents/${agentId}/restart`)
    assert.strictEqual(restarted.status, 200, JSON.stringify(restarted.body))
    assert.deepStrictEqual(await startedOn(b.server, agentId), [a.node, a.node])

    // Credentials are still checked, on the node that answers.
    const refused = await fetch(`${b.server.url}/v0/agents/${agentId}/devices`, { headers: { authorization: "Bearer nope" } })
    assert.strictEqual(refused.status, 401)
    // A made-up node credential changes nothing: the request is forwarded (and refused there) like any other.
    const forged = await fetch(`${b.server.url}/v0/agents/${agentId}/devices`, {
      headers: { authorization: `Bearer ${user.token}`, "x-cairn-forwarded": `${Date.now()}.forged` }
    })
    assert.strictEqual(forged.status, 200)

    // A 3 MiB upload streamed into B in 64 KiB pieces, and read back through B.
    const content = Buffer.alloc(3 * 1024 * 1024, "cairn cluster ")
    const uploaded = await fetch(`${b.server.url}/v0/agents/${agentId}/files/upload`, {
      method: "POST",
      headers: { authorization: `Bearer ${user.token}`, "content-type": "application/json" },
      body: streamed(JSON.stringify({ filename: "big.txt", contentBase64: content.toString("base64") })),
      duplex: "half"
    } as RequestInit)
    assert.strictEqual(uploaded.status, 200, await uploaded.clone().text())
    const read = await fetch(`${b.server.url}/v0/agents/${agentId}/files?path=uploads/big.txt`, { headers: { authorization: `Bearer ${user.token}` } })
    assert.strictEqual(read.status, 200)
    assert.isTrue(Buffer.from(await read.arrayBuffer()).equals(content), "the file read through B is the one uploaded through B")

    // The agent's app on its domain, over a WebSocket landing on B: B's engine does not run the agent, A's does.
    const appPort = await freePort()
    const app: ChildProcess = spawn(process.execPath, [fixture, String(appPort)], { stdio: ["ignore", "pipe", "inherit"] })
    cleanups.push(() => app.kill("SIGKILL"))
    await once(app.stdout!, "data")
    const domain = await json(b.server, "POST", `/v0/agents/${agentId}/domains`, { subdomain: "shop", targetPort: appPort })
    assert.strictEqual(domain.status, 201, JSON.stringify(domain.body))
    const host = `shop.${appsDomain}`
    const page = await waitFor("the domain routes", servers, async () => {
      const reply = await viaHost(b.server, host, "/orders", "two coffees")
      return reply.status === 200 ? JSON.parse(reply.text) : undefined
    })
    assert.deepInclude(page, { app: "workspace app", method: "POST", body: "two coffees", host })
    const ws = new WebSocket(`${b.server.url.replace("http", "ws")}/live`, { headers: { host } })
    await once(ws, "open")
    const echoed = once(ws, "message")
    ws.send("hello through B")
    assert.strictEqual(String((await echoed)[0]), "echo: hello through B")
    ws.close()

    // The agent's own host (decision 0046), landing on B: its gateway is A's.
    const gatewayToken = (await json(b.server, "GET", `/v0/agents/${agentId}/gateway-token`)).body.gatewayToken as string
    const ownHost = await viaHost(b.server, `${agentId}.agents.localhost`, "/", undefined, { authorization: `Bearer ${gatewayToken}` })
    assert.strictEqual(ownHost.status, 200, ownHost.text)
    assert.include(ownHost.text, `Simulated gateway ${agentId}`)

    // A snapshot of the kept agent (asked of B, taken on A into the shared blockstore); the bare one has none.
    const synced = await json(b.server, "POST", `/v0/agents/${agentId}/snapshots/sync`)
    assert.strictEqual(synced.status, 200, JSON.stringify(synced.body))

    // kill -9 node A: B adopts both agents once A's lease expires.
    const killedAt = Date.now()
    a.server.child.kill("SIGKILL")
    await a.server.exited
    await waitFor("B runs the kept agent", [b.server], async () =>
      (await statusOn(b.server, agentId)) === "running" && (await startedOn(b.server, agentId)).at(-1) === b.node ? true : undefined)
    const failoverMs = Date.now() - killedAt
    console.log(`failover: kill -9 of node A to the agent running on node B in ${failoverMs} ms (lease TTL 4 s, heartbeat 1 s, simulated start 2 s)`)

    // Its workspace came back from the snapshot.
    const restored = await fetch(`${b.server.url}/v0/agents/${agentId}/files?path=uploads/big.txt`, { headers: { authorization: `Bearer ${user.token}` } })
    assert.strictEqual(restored.status, 200)
    assert.isTrue(Buffer.from(await restored.arrayBuffer()).equals(content), "the workspace was restored from the snapshot")
    assert.strictEqual((await json(b.server, "GET", `/v0/agents/${agentId}/devices`)).status, 200)

    // Nothing to restore the bare agent from: not running, and its history says why.
    const reason = await waitFor("the bare agent is recorded not running", [b.server], async () => {
      const events = (await json(b.server, "GET", `/v0/agents/${bare}/events`)).body?.events ?? []
      const failed = events.filter((e: { type: string }) => e.type === "AgentFailedToStart").at(-1)
      return failed?.data?.logTail as string | undefined
    })
    assert.include(reason, "no snapshot to restore its workspace from")
    assert.strictEqual(await statusOn(b.server, bare), "not_running")

    // A restart of it through B now starts it afresh there.
    assert.strictEqual((await json(b.server, "POST", `/v0/agents/${bare}/restart`)).status, 200)
    assert.strictEqual(await statusOn(b.server, bare), "running")
  })
})

describe.runIf(databaseUrl !== undefined)("a sleeping agent across nodes", () => {
  it("is adopted asleep by the other node after kill -9, its workspace restored from the snapshot it fell asleep with, and wakes there", { timeout: 300_000 }, async () => {
    const { a, b } = await startTwoNodes({ AGENT_IDLE_AFTER: "2 seconds" })
    const servers = [a.server, b.server]
    const user = newApiUser({ url: a.server.url, dataDir: a.dataDir }, { workspace: "Sleepy cluster", scopes: "org:agents", agentLimit: 1 })
    const json = async (server: ServerProcess, method: string, path: string, body?: unknown) => {
      const response = await fetch(`${server.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${user.token}` },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
      const text = await response.text()
      return { status: response.status, body: text === "" ? undefined : JSON.parse(text) }
    }
    const agentOn = async (server: ServerProcess, agentId: string) => (await json(server, "GET", `/v0/agents/${agentId}`)).body
    const created = await json(a.server, "POST", "/v0/agents", { name: "dozing" })
    assert.strictEqual(created.status, 201, JSON.stringify(created.body))
    const agentId = created.body.agent.agentId as string
    await waitFor("the agent runs", servers, async () => (await agentOn(a.server, agentId))?.agent?.status === "running" || undefined)
    const note = Buffer.from("written on node A before it slept\n")
    const uploaded = await json(a.server, "POST", `/v0/agents/${agentId}/files/upload`, { filename: "note.txt", contentBase64: note.toString("base64") })
    assert.strictEqual(uploaded.status, 200, JSON.stringify(uploaded.body))

    const asleep = await waitFor("the agent sleeps on A", servers, async () => {
      const body = await agentOn(a.server, agentId)
      return body?.agent?.status === "sleeping" ? body : undefined
    })
    assert.isString(asleep.agent.snapshotCid, "snapshotted as it fell asleep")

    // kill -9 node A: B adopts the agent, asleep, with its workspace restored from that snapshot.
    a.server.child.kill("SIGKILL")
    await a.server.exited
    await waitFor("B adopted it asleep", [b.server], async () =>
      b.server.output().includes(`Agent ${agentId} adopted asleep from node ${a.node}`) || undefined)
    assert.strictEqual((await agentOn(b.server, agentId)).agent.status, "sleeping")

    // A request through B wakes it on B, and its file is there.
    const tasks = await json(b.server, "GET", `/v0/agents/${agentId}/tasks`)
    assert.strictEqual(tasks.status, 200, JSON.stringify(tasks.body))
    assert.strictEqual((await agentOn(b.server, agentId)).agent.status, "running")
    const events = (await json(b.server, "GET", `/v0/agents/${agentId}/events`)).body.events as Array<{ type: string; data: { node?: string; reason?: string } }>
    assert.strictEqual(events.filter((e) => e.type === "AgentStarted").at(-1)?.data.node, b.node)
    assert.deepStrictEqual(events.filter((e) => e.type === "AgentWoken").map((e) => e.data.reason), ["request"])
    const read = await fetch(`${b.server.url}/v0/agents/${agentId}/files?path=uploads/note.txt`, { headers: { authorization: `Bearer ${user.token}` } })
    assert.strictEqual(read.status, 200)
    assert.isTrue(Buffer.from(await read.arrayBuffer()).equals(note), "the workspace came back from the sleep snapshot")
  })
})

const nginx = "/usr/sbin/nginx"

/** nginx round-robin over `upstreams`, as a foreground process of this test on a free port; killed by its PID. */
const startNginx = async (upstreams: ReadonlyArray<string>) => {
  const prefix = mkdtempSync(join(tmpdir(), "cairn-nginx-"))
  const port = await freePort()
  writeFileSync(join(prefix, "nginx.conf"), `
daemon off;
master_process off;
pid ${prefix}/nginx.pid;
error_log ${prefix}/error.log warn;
events { worker_connections 512; }
http {
  access_log off;
  client_body_temp_path ${prefix}/body;
  proxy_temp_path ${prefix}/proxy;
  fastcgi_temp_path ${prefix}/fastcgi;
  uwsgi_temp_path ${prefix}/uwsgi;
  scgi_temp_path ${prefix}/scgi;
  client_max_body_size 0;
  map $http_upgrade $connection_upgrade { default upgrade; "" ""; }
  upstream cairn {
${upstreams.map((u) => `    server ${u} max_fails=1 fail_timeout=5s;`).join("\n")}
    keepalive 16;
  }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://cairn;
      proxy_http_version 1.1;
      proxy_set_header Host $host;
      proxy_set_header Upgrade $http_upgrade;
      proxy_set_header Connection $connection_upgrade;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_request_buffering off;
      proxy_buffering off;
      # A node that refuses the connection never saw the request: another one may take it, whatever its method.
      proxy_next_upstream error timeout non_idempotent;
      add_header X-Upstream $upstream_addr always;
    }
  }
}
`)
  const child = spawn(nginx, ["-p", prefix, "-c", join(prefix, "nginx.conf"), "-e", join(prefix, "error.log")], { stdio: "ignore" })
  cleanups.push(() => {
    child.kill("SIGKILL")
    rmSync(prefix, { recursive: true, force: true })
  })
  const url = `http://127.0.0.1:${port}`
  await waitFor("nginx serves", [], async () => {
    if (child.exitCode !== null) throw new Error(`nginx exited: ${existsSync(join(prefix, "error.log")) ? readFileSync(join(prefix, "error.log"), "utf8") : ""}`)
    return fetch(`${url}/healthz`).then((r) => (r.ok ? true : undefined), () => undefined)
  })
  return url
}

describe.runIf(databaseUrl !== undefined && existsSync(nginx))("two nodes behind nginx", () => {
  it("an agent's whole life through round-robin, its node killed mid-way", { timeout: 600_000 }, async () => {
    const { a, b } = await startTwoNodes()
    const nodes = [a, b]
    const servers = nodes.map((n) => n.server)
    const balancer = await startNginx(servers.map((s) => new URL(s.url).host))

    const user = newApiUser({ url: balancer, dataDir: a.dataDir }, { workspace: "Balanced", scopes: "org:agents", agentLimit: 10 })
    const landedOn = new Set<string>()
    const call = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(`${balancer}${path}`, {
        method,
        headers: { authorization: `Bearer ${user.token}` },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
      landedOn.add(response.headers.get("x-upstream") ?? "")
      const text = await response.text()
      return { status: response.status, body: text === "" ? undefined : JSON.parse(text) }
    }
    const status = async (agentId: string) => (await call("GET", `/v0/agents/${agentId}`)).body?.agent?.status
    const lastStartedOn = async (agentId: string) =>
      ((await call("GET", `/v0/agents/${agentId}/events`)).body?.events ?? []).filter((e: { type: string }) => e.type === "AgentStarted").at(-1)?.data?.node

    const created = await call("POST", "/v0/agents", { name: "balanced" })
    assert.strictEqual(created.status, 201, JSON.stringify(created.body))
    const agentId = created.body.agent.agentId as string
    await waitFor("the agent runs", servers, async () => (await status(agentId)) === "running" ? true : undefined)
    for (let i = 0; i < 4; i++) {
      const restarted = await call("POST", `/v0/agents/${agentId}/restart`)
      assert.strictEqual(restarted.status, 200, JSON.stringify(restarted.body))
      const devices = await call("GET", `/v0/agents/${agentId}/devices`)
      assert.strictEqual(devices.status, 200, JSON.stringify(devices.body))
    }
    assert.strictEqual(landedOn.size, 2, `requests landed on both nodes: ${[...landedOn].join(", ")}`)
    const upload = await call("POST", `/v0/agents/${agentId}/files/upload`, { filename: "notes.txt", contentBase64: Buffer.from("kept\n").toString("base64") })
    assert.strictEqual(upload.status, 200, JSON.stringify(upload.body))
    assert.strictEqual((await call("POST", `/v0/agents/${agentId}/snapshots/sync`)).status, 200)

    // Mid-way, the agent's node is killed; the other one adopts it, and its life goes on through the balancer.
    const owner = await lastStartedOn(agentId)
    const victim = nodes.find((n) => n.node === owner)!
    const survivor = nodes.find((n) => n.node !== owner)!
    const killedAt = Date.now()
    victim.server.child.kill("SIGKILL")
    await victim.server.exited
    await waitFor("the agent runs on the other node", [survivor.server], async () =>
      (await status(agentId)) === "running" && (await lastStartedOn(agentId)) === survivor.node ? true : undefined)
    console.log(`failover behind nginx: ${Date.now() - killedAt} ms from kill -9 to running on the other node`)
    const restarted = await call("POST", `/v0/agents/${agentId}/restart`)
    assert.strictEqual(restarted.status, 200, JSON.stringify(restarted.body))
    assert.strictEqual((await call("GET", `/v0/agents/${agentId}/devices`)).status, 200)
    const file = await fetch(`${balancer}/v0/agents/${agentId}/files?path=uploads/notes.txt`, { headers: { authorization: `Bearer ${user.token}` } })
    assert.strictEqual(await file.text(), "kept\n")
    const deleted = await call("DELETE", `/v0/agents/${agentId}`)
    assert.strictEqual(deleted.status, 200, JSON.stringify(deleted.body))
    assert.strictEqual((await call("GET", `/v0/agents/${agentId}`)).status, 404)
  })
})
