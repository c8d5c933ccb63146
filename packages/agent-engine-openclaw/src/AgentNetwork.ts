/**
 * A network of its own for every agent (decision 0043). Each sandbox that runs a gateway (and each console command
 * while no gateway runs) is made in a new network namespace by bubblewrap; before anything starts inside it, Cairn
 *
 * - gives it a way out with `slirp4netns` (user-mode TCP/IP: the namespace sees `10.0.2.100/24`, its router
 *   `10.0.2.2`, DNS at `10.0.2.3`), with `--disable-host-loopback` so that the router is not the host's loopback;
 * - shuts every address of the host and of private networks (10/8, 172.16/12, 192.168/16, 100.64/10, 169.254/16, and
 *   each address of the host's interfaces) with `prohibit` routes in the namespace, which the agent cannot change
 *   (it has no capabilities): the internet stays open for model providers and channels' APIs;
 * - opens the host services an operator allows (`AGENT_EGRESS_ALLOW`: `127.0.0.1:11434` for a local Ollama, say) as
 *   listeners inside the namespace at the same address and port, relayed through a Unix socket to Cairn, which
 *   connects to the service: the only way in, held by Cairn before the agent runs (it cannot take the port).
 *
 * Cairn reaches a port inside the namespace (its gateway, an agent's app) through a relay it starts there
 * (`socat`, in the namespace by `nsenter`, outside the agent's PID namespace, so the agent cannot stop or replace it)
 * that listens on a Unix socket in a folder only Cairn can open. No port of any agent is bound on the host: two
 * agents (or two Cairn servers) can use the same ports, an agent cannot listen in another's place, and the socket
 * Cairn connects to is its own, so a gateway token only ever goes to the namespace it was made for.
 *
 * The namespace is held by an open file descriptor in Cairn (`/proc/<cairn>/fd/<n>`): later sandboxes of the agent
 * (console commands, CLI runs) join it by that path, never by a pid that could be reused. Everything here ends with
 * `close`: the relays, slirp4netns (it also exits when Cairn does: its exit pipe closes) and the descriptor.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import type { Readable, Writable } from "node:stream"

/** A host service agents may reach (AGENT_EGRESS_ALLOW): an IPv4 address and a TCP port. */
export interface EgressService {
  readonly host: string
  readonly port: number
}

/** The private and special ranges no agent may reach, besides the host's own addresses. */
export const blockedRanges = ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "169.254.0.0/16"]

/** slirp4netns's network inside every namespace (its defaults): the agent's address, its router and its DNS. */
export const slirpNetwork = { address: "10.0.2.100", router: "10.0.2.2", dns: "10.0.2.3" } as const

/** The sandbox's `/etc/resolv.conf`: slirp4netns's DNS, which forwards to the host's resolvers. */
export const resolvConf = `nameserver ${slirpNetwork.dns}\n`

const ipv4 = /^(25[0-5]|2[0-4]\d|1?\d?\d)(\.(25[0-5]|2[0-4]\d|1?\d?\d)){3}$/

/**
 * Parses AGENT_EGRESS_ALLOW: a comma-separated list of `address:port` (IPv4 literals; `localhost` is 127.0.0.1).
 * Returns the services, or what is wrong.
 */
export const parseEgressAllow = (text: string | undefined): ReadonlyArray<EgressService> | string => {
  const services: Array<EgressService> = []
  for (const entry of (text ?? "").split(",").map((part) => part.trim()).filter((part) => part.length > 0)) {
    const match = /^(.+):(\d{1,5})$/.exec(entry)
    const host = match?.[1] === "localhost" ? "127.0.0.1" : match?.[1]
    const port = Number(match?.[2])
    if (host === undefined || !ipv4.test(host) || !(port >= 1 && port <= 65_535)) {
      return `AGENT_EGRESS_ALLOW: "${entry}" is not address:port (an IPv4 address or localhost, and a port 1-65535)`
    }
    services.push({ host, port })
  }
  return services
}

/** The programs this needs, found on Cairn's PATH; what is missing otherwise. */
const tools = ["slirp4netns", "nsenter", "ip", "socat", "setpriv"] as const
type Tools = Record<(typeof tools)[number], string>

const onPath = (name: string) =>
  (process.env["PATH"] ?? "").split(Path.delimiter).filter((dir) => Path.isAbsolute(dir))
    .map((dir) => Path.join(dir, name))
    .find((path) => {
      try {
        Fs.accessSync(path, Fs.constants.X_OK)
        return Fs.statSync(path).isFile()
      } catch {
        return false
      }
    })

const run = (file: string, args: ReadonlyArray<string>, input?: string) =>
  new Promise<void>((resolve, reject) => {
    const child = execFile(file, args, { timeout: 10_000 }, (error, _stdout, stderr) => {
      if (error === null) resolve()
      else reject(new Error(`${Path.basename(file)} ${args.slice(-4).join(" ")}: ${stderr.trim() || error.message}`))
    })
    if (input !== undefined) child.stdin?.end(input)
  })

/** Resolves once `path` exists (a relay's socket), rejects when `child` exits first or after `timeoutMs`. */
const socketReady = (path: string, child: ChildProcess, tail: () => string, timeoutMs = 5_000) =>
  new Promise<void>((resolve, reject) => {
    const deadline = Date.now() + timeoutMs
    const check = () => {
      if (Fs.existsSync(path)) return resolve()
      if (child.exitCode !== null || child.signalCode !== null) return reject(new Error(`the relay exited: ${tail()}`))
      if (Date.now() > deadline) return reject(new Error(`the relay did not listen within ${timeoutMs} ms`))
      setTimeout(check, 5)
    }
    check()
  })

/**
 * Resolves once the namespace's loopback is up with its address (its local routes are in the namespace's FIB):
 * bubblewrap sets it up right after it reports its first process, and a route or link change of ours at the same
 * moment can make its own fail ("loopback: Failed RTM_NEWADDR", seen under load).
 */
const loopbackUp = async (sandboxPid: number, timeoutMs = 5_000) => {
  const deadline = Date.now() + timeoutMs
  while (!Fs.readFileSync(`/proc/${sandboxPid}/net/fib_trie`, "utf8").includes("127.0.0.1")) {
    if (Date.now() > deadline) throw new Error(`the sandbox's loopback was not up within ${timeoutMs} ms`)
    await new Promise((resolve) => setTimeout(resolve, 2))
  }
}

/** One agent's namespace, once attached: where to join it, and relays to ports inside it. */
export interface Network {
  /** The namespace's path for `nsenter --net=`: Cairn's open descriptor of it. */
  readonly path: string
  /** The Unix socket of a relay to `127.0.0.1:<port>` inside the namespace, started on first use. */
  readonly endpoint: (port: number) => Promise<string>
  /** Ends the relays and slirp4netns and lets go of the namespace. Idempotent. */
  readonly close: () => void
}

export interface AgentNetworks {
  /** The `nsenter` that joins a Network by its path. */
  readonly nsenter: string
  /** Gives the namespace of the sandbox whose first process is `sandboxPid` its network; rejects when it cannot. */
  readonly attach: (sandboxPid: number) => Promise<Network>
  /** Ends the relays to allowed host services. */
  readonly close: () => void
}

/** Makes what gives agents their networks; a string says why it cannot work here (a program missing). */
export const make = (egressAllow: ReadonlyArray<EgressService>): AgentNetworks | string => {
  const found: Partial<Tools> = {}
  for (const name of tools) {
    const path = onPath(name)
    if (path === undefined) {
      return `${name} is not installed (Debian/Ubuntu: apt-get install slirp4netns socat iproute2 util-linux)`
    }
    found[name] = path
  }
  const bin = found as Tools
  // Short and Cairn's own (0700): a Unix socket's path has at most 107 bytes, and no one else may connect.
  const socketsDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "cairn-net-"))
  let nextSocket = 0
  const socketPath = (name: string) => Path.join(socketsDir, `${nextSocket++}-${name}.sock`)

  // Cairn's side of each allowed service: a Unix socket the namespace's listener connects to.
  const egress = egressAllow.map((service) => {
    const path = socketPath(`egress-${service.port}`)
    const server = Net.createServer((inside) => {
      const outside = Net.connect(service.port, service.host)
      inside.pipe(outside).pipe(inside)
      inside.on("error", () => outside.destroy())
      outside.on("error", () => inside.destroy())
    })
    server.listen(path)
    server.unref()
    return { service, path, server }
  })

  /** The host's own IPv4 addresses, each shut inside every namespace (a service bound to 0.0.0.0 answers on them). */
  const hostAddresses = () =>
    Object.values(Os.networkInterfaces()).flatMap((addresses) => addresses ?? [])
      .filter((address) => address.family === "IPv4" && !address.internal)
      .map((address) => `${address.address}/32`)

  /** Runs `file args` in the namespace: with `setpriv`, killed when Cairn dies. */
  const spawnInside = (namespace: string, file: string, args: ReadonlyArray<string>) =>
    spawn(bin.setpriv, ["--pdeathsig", "KILL", "--", bin.nsenter, `--net=${namespace}`, "--", file, ...args], {
      stdio: ["ignore", "ignore", "pipe"]
    })

  const attach = async (sandboxPid: number): Promise<Network> => {
    // Held open while the network lives: later sandboxes join by it, and a reused pid can never redirect them.
    const fd = Fs.openSync(`/proc/${sandboxPid}/ns/net`, "r")
    const path = `/proc/${process.pid}/fd/${fd}`
    const children = new Set<ChildProcess>()
    const sockets = new Set<string>()
    let closed = false
    const close = () => {
      if (closed) return
      closed = true
      for (const child of children) child.kill("SIGKILL")
      for (const socket of sockets) Fs.rmSync(socket, { force: true })
      try {
        Fs.closeSync(fd)
      } catch {
        // Closed already.
      }
    }
    const track = (child: ChildProcess) => {
      children.add(child)
      child.on("error", () => {})
      child.once("exit", () => children.delete(child))
      let stderr = ""
      child.stderr?.on("data", (chunk: Buffer) => void (stderr = (stderr + chunk.toString()).slice(-2_000)))
      return () => stderr.trim()
    }
    try {
      await loopbackUp(sandboxPid)
      // slirp4netns: ready when it writes to fd 3; exits when fd 4 closes (Cairn closes it, or dies).
      const slirp = spawn(bin.slirp4netns, [
        "--configure", "--mtu", "65520", "--disable-host-loopback", "--enable-sandbox", "--enable-seccomp",
        "--ready-fd", "3", "--exit-fd", "4", "--netns-type=path", path, "tap0"
      ], { stdio: ["ignore", "ignore", "pipe", "pipe", "pipe"] })
      const slirpTail = track(slirp)
      const exitPipe = slirp.stdio[4] as Writable
      exitPipe.on("error", () => {})
      await new Promise<void>((resolve, reject) => {
        const ready = slirp.stdio[3] as Readable
        ready.once("data", () => resolve())
        slirp.once("exit", (code, signal) => reject(new Error(`slirp4netns exited (${signal ?? code}): ${slirpTail()}`)))
        slirp.once("error", reject)
      })
      const shut = [...new Set([...blockedRanges, ...hostAddresses()])]
      const localAddresses = [...new Set(egress.map(({ service }) => service.host).filter((host) => !host.startsWith("127.")))]
      await run(bin.nsenter, [`--net=${path}`, "--", bin.ip, "-batch", "-"], [
        ...shut.map((range) => `route add prohibit ${range}`),
        // An allowed service keeps its own address inside, on the namespace's loopback (a local address wins over
        // the prohibit routes).
        ...localAddresses.map((host) => `address add ${host}/32 dev lo`)
      ].join("\n") + "\n")
      for (const { service, path: outside } of egress) {
        const listener = spawnInside(path, bin.socat, [
          `TCP-LISTEN:${service.port},bind=${service.host},reuseaddr,fork`,
          `UNIX-CONNECT:${outside}`
        ])
        track(listener)
      }
    } catch (error) {
      close()
      throw error
    }

    const relays = new Map<number, Promise<string>>()
    const endpoint = (port: number) => {
      const existing = relays.get(port)
      if (existing !== undefined) return existing
      const socket = socketPath(String(port))
      sockets.add(socket)
      // Large buffers: socat reads and writes 8 KiB at a time by default, a third of a direct connection's throughput.
      const relay = spawnInside(path, bin.socat, ["-b", "262144",
        `UNIX-LISTEN:${socket},fork,unlink-early,mode=600`,
        `TCP:127.0.0.1:${port}`
      ])
      const tail = track(relay)
      const ready = (closed ? Promise.reject(new Error("the agent's network is closed")) : socketReady(socket, relay, tail))
        .then(() => socket)
      relays.set(port, ready)
      // A relay that failed, or ended, is started again on the next use.
      const forget = () => {
        if (relays.get(port) === ready) relays.delete(port)
      }
      ready.catch(forget)
      relay.once("exit", forget)
      return ready
    }
    return { path, endpoint, close }
  }

  return {
    nsenter: bin.nsenter,
    attach,
    close: () => {
      for (const { server } of egress) server.close()
      Fs.rmSync(socketsDir, { recursive: true, force: true })
    }
  }
}
