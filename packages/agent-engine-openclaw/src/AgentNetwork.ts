/**
 * A network of its own for every agent (decision 0043): one network namespace per agent, made by Cairn before the
 * agent's first sandbox and kept across its gateway's restarts (an app the agent runs stays reachable), which every
 * sandbox of the agent joins (its gateway, its console commands, its CLI runs). Before any joins it, Cairn
 *
 * - gives it a way out with `slirp4netns` (user-mode TCP/IP: the namespace sees `10.0.2.100/24`, its router
 *   `10.0.2.2`, DNS at `10.0.2.3`), with `--disable-host-loopback` so that the router is not the host's loopback;
 * - shuts every address of the host and of private networks (10/8, 172.16/12, 192.168/16, 100.64/10, 169.254/16, and
 *   each address of the host's interfaces) with `prohibit` routes in the namespace, which the agent cannot change
 *   (it has no capabilities): the internet stays open for model providers and channels' APIs;
 * - opens the host services an operator allows (`AGENT_EGRESS_ALLOW`: `127.0.0.1:11434` for a local Ollama, say) as
 *   listeners inside the namespace at the same address and port, each accepted connection handed to Cairn, which
 *   connects it to the service: the only way in, held by Cairn before the agent runs (it cannot take the port).
 *
 * Cairn reaches a port inside the namespace (its gateway, an agent's app) through its connector there
 * (network-connector.mjs: a small Node process in the namespace by `nsenter`, outside the agent's PID namespace, so
 * the agent can neither see nor stop it). The connector connects inside and hands Cairn the connected socket over
 * their IPC channel: Cairn then holds a TCP connection into the namespace, with no relay copying its bytes. No port
 * of any agent is bound on the host: two agents (or two Cairn servers) can use the same ports, an agent cannot listen
 * in another's place, and a gateway token only ever goes to the namespace Cairn made for that gateway.
 *
 * The namespace is the connector's own (`unshare --net`), owned by Cairn's user namespace: nothing the agent runs has
 * a capability over it. It is held by an open file descriptor in Cairn (`/proc/<cairn>/fd/<n>`), and sandboxes join
 * it by that path, never by a pid that could be reused. Everything here ends with `close`: the connector, slirp4netns
 * (both also end when Cairn does: `--pdeathsig`, their pipes close) and the descriptor.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import type { Readable, Writable } from "node:stream"
import { runCommand } from "./Command.ts"
import { onPath } from "./HostEnvironment.ts"

/** The connector's file: run by Cairn's Node, outside any sandbox. */
const connectorPath = Path.join(import.meta.dirname, "network-connector.mjs")

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
const tools = ["slirp4netns", "nsenter", "unshare", "ip", "setpriv"] as const
type Tools = Record<(typeof tools)[number], string>

/** One agent's namespace: where to join it, and connections into it. */
export interface Network {
  /** The namespace's path for `nsenter --net=`: Cairn's open descriptor of it. */
  readonly path: string
  /** A TCP connection to `127.0.0.1:<port>` inside the namespace; rejects (ECONNREFUSED, …) when none can be made. */
  readonly connect: (port: number) => Promise<Net.Socket>
  /**
   * Keeps `path` valid for a process about to join: its descriptor stays open until every hold is released, even
   * after `close` (else a reused descriptor number could lead into another namespace). Throws once closed.
   */
  readonly hold: () => () => void
  /** Ends the connector and slirp4netns and lets go of the namespace. Idempotent. */
  readonly close: () => void
  /** Whether it was closed (or ended on its own: the connector or slirp4netns gone). */
  readonly closed: boolean
}

export interface AgentNetworks {
  /** The `nsenter` that joins a Network by its path. */
  readonly nsenter: string
  /** Makes a network for an agent; rejects when it cannot. */
  readonly create: () => Promise<Network>
}

/**
 * Makes what gives agents their networks, with `nodePath` running the connectors; a string says why it cannot work
 * here (a program missing).
 */
export const make = (egressAllow: ReadonlyArray<EgressService>, nodePath: string): AgentNetworks | string => {
  const found: Partial<Tools> = {}
  for (const name of tools) {
    const path = onPath(name)
    if (path === undefined) return `${name} is not installed (Debian/Ubuntu: apt-get install slirp4netns iproute2 util-linux)`
    found[name] = path
  }
  const bin = found as Tools

  /** The host's own IPv4 addresses, each shut inside every namespace (a service bound to 0.0.0.0 answers on them). */
  const hostAddresses = () =>
    Object.values(Os.networkInterfaces()).flatMap((addresses) => addresses ?? [])
      .filter((address) => address.family === "IPv4" && !address.internal)
      .map((address) => `${address.address}/32`)

  /** A connection the agent made to an allowed service, joined to the service itself. */
  const relayEgress = (inside: Net.Socket, service: EgressService) => {
    const outside = Net.connect(service.port, service.host)
    inside.on("error", () => outside.destroy())
    outside.on("error", () => inside.destroy())
    inside.pipe(outside).pipe(inside)
    inside.resume()
  }

  const create = async (): Promise<Network> => {
    // The connector makes the namespace (`unshare --net`) and holds it; killed with Cairn (`--pdeathsig`), and it
    // exits when its channel to Cairn closes.
    const started = startConnector(
      [bin.setpriv, "--pdeathsig", "KILL", "--", bin.unshare, "--net", "--", nodePath],
      egressAllow,
      (socket, service) => relayEgress(socket, service)
    )
    const connector = await started.spawned
    const children = new Set<ChildProcess>([connector.child])
    let fd: number | undefined
    let closed = false
    let holds = 0
    const closeDescriptor = () => {
      if (!closed || holds > 0 || fd === undefined) return
      try {
        Fs.closeSync(fd)
      } catch {
        // Closed already.
      }
    }
    const close = () => {
      if (closed) return
      closed = true
      connector.close()
      for (const child of children) child.kill("SIGKILL")
      closeDescriptor()
    }
    connector.child.once("exit", close)
    try {
      // Held open while the network lives: sandboxes join by it, and a reused pid can never redirect them.
      fd = Fs.openSync(`/proc/${connector.child.pid}/ns/net`, "r")
      const path = `/proc/${process.pid}/fd/${fd}`
      const shut = [...new Set([...blockedRanges, ...hostAddresses()])]
      const localAddresses = [...new Set(egressAllow.map((service) => service.host).filter((host) => !host.startsWith("127.")))]
      const routes = await runCommand(bin.nsenter, [`--net=${path}`, "--", bin.ip, "-batch", "-"], {
        env: process.env,
        timeoutMs: 10_000,
        input: [
          "link set lo up",
          ...shut.map((range) => `route add prohibit ${range}`),
          // An allowed service keeps its own address inside, on the namespace's loopback (a local address wins over
          // the prohibit routes).
          ...localAddresses.map((host) => `address add ${host}/32 dev lo`)
        ].join("\n") + "\n"
      })
      if (routes.code !== 0) throw new Error(`ip -batch in the agent's network: ${routes.stderr.trim() || `exit ${routes.code}`}`)
      // slirp4netns: ready when it writes to fd 3; exits when fd 4 closes (Cairn closes it, or dies).
      const slirp = spawn(bin.slirp4netns, [
        "--configure", "--mtu", "65520", "--disable-host-loopback", "--enable-sandbox", "--enable-seccomp",
        "--ready-fd", "3", "--exit-fd", "4", "--netns-type=path", path, "tap0"
      ], { stdio: ["ignore", "ignore", "pipe", "pipe", "pipe"] })
      children.add(slirp)
      slirp.on("error", () => {})
      let slirpTail = ""
      slirp.stderr?.on("data", (chunk: Buffer) => void (slirpTail = (slirpTail + chunk.toString()).slice(-2_000)))
      ;(slirp.stdio[4] as Writable).on("error", () => {})
      await new Promise<void>((resolve, reject) => {
        ;(slirp.stdio[3] as Readable).once("data", () => resolve())
        slirp.once("exit", (code, signal) => reject(new Error(`slirp4netns exited (${signal ?? code}): ${slirpTail.trim()}`)))
        slirp.once("error", reject)
      })
      // Slirp ending (it should not) ends the network: a gateway in it would be cut off.
      slirp.once("exit", close)
      // The allowed services listen before any of the agent's processes run.
      await started.listen()
      const hold = () => {
        if (closed) throw new Error("the agent's network is gone")
        holds++
        let released = false
        return () => {
          if (released) return
          released = true
          holds--
          closeDescriptor()
        }
      }
      const connect = (port: number) =>
        closed ? Promise.reject(new Error("the agent's network is closed")) : connector.connect(port)
      return { path, connect, close, hold, get closed() { return closed } }
    } catch (error) {
      close()
      throw error
    }
  }

  return { nsenter: bin.nsenter, create }
}

/** Cairn's connector in a namespace (network-connector.mjs), once it is ready. */
export interface Connector {
  readonly child: ChildProcess
  /** A TCP connection to `127.0.0.1:<port>` in the connector's namespace, handed over by it. */
  readonly connect: (port: number) => Promise<Net.Socket>
  /** Ends it; pending connects fail. */
  readonly close: () => void
}

/**
 * Starts the connector with `prefix` (what puts it in its namespace, ending with the Node to run it): `spawned`
 * once it runs, `listen()` once it listens for the `egress` services (handing their connections to `onEgress`).
 */
export const startConnector = (
  prefix: readonly [string, ...Array<string>],
  egress: ReadonlyArray<EgressService>,
  onEgress: (socket: Net.Socket, service: EgressService) => void
): { readonly spawned: Promise<Connector>; readonly listen: () => Promise<void> } => {
  const [file, ...args] = prefix
  const child = spawn(file, [...args, connectorPath, JSON.stringify(egress)], {
    stdio: ["ignore", "ignore", "pipe", "ipc"],
    serialization: "json"
  })
  child.on("error", () => {})
  let stderr = ""
  child.stderr?.on("data", (chunk: Buffer) => void (stderr = (stderr + chunk.toString()).slice(-2_000)))
  const pending = new Map<number, { readonly resolve: (socket: Net.Socket) => void; readonly reject: (error: Error) => void }>()
  let nextId = 0
  let ended = false
  const failAll = (why: string) => {
    ended = true
    for (const request of pending.values()) request.reject(new Error(why))
    pending.clear()
  }
  const exited = new Promise<never>((_, reject) => {
    child.once("exit", (code, signal) => reject(new Error(`the network connector exited (${signal ?? code}): ${stderr.trim()}`)))
    child.once("error", reject)
  })
  exited.catch(() => {})
  let onStatus: (message: { readonly running?: boolean; readonly ready?: boolean; readonly failed?: string }) => void = () => {}
  child.on("message", (message: { readonly id?: number; readonly ok?: boolean; readonly code?: string; readonly egress?: number; readonly running?: boolean; readonly ready?: boolean; readonly failed?: string }, handle: unknown) => {
    if (message.running !== undefined || message.ready !== undefined || message.failed !== undefined) return onStatus(message)
    if (message.egress !== undefined) {
      const service = egress[message.egress]
      if (handle instanceof Net.Socket && service !== undefined) onEgress(handle, service)
      return
    }
    const request = message.id === undefined ? undefined : pending.get(message.id)
    if (request === undefined) {
      if (handle instanceof Net.Socket) handle.destroy()
      return
    }
    pending.delete(message.id!)
    if (message.ok === true && handle instanceof Net.Socket) request.resolve(handle)
    else request.reject(Object.assign(new Error(`connect 127.0.0.1 in the agent's network: ${message.code ?? "failed"}`), { code: message.code }))
  })
  child.once("exit", () => failAll("the agent's network connector ended"))
  const connector: Connector = {
    child,
    connect: (port) =>
      new Promise<Net.Socket>((resolve, reject) => {
        if (ended) return reject(new Error("the agent's network connector ended"))
        const id = nextId++
        pending.set(id, { resolve, reject })
        child.send({ id, port }, (error) => {
          if (error === null || !pending.has(id)) return
          pending.delete(id)
          reject(error)
        })
      }),
    close: () => {
      failAll("the agent's network is closed")
      child.kill("SIGKILL")
    }
  }
  const status = (wanted: "running" | "ready") =>
    Promise.race([
      exited,
      new Promise<void>((resolve, reject) => {
        const previous = onStatus
        onStatus = (message) => {
          previous(message)
          if (message[wanted] === true) resolve()
          if (message.failed !== undefined) reject(new Error(`AGENT_EGRESS_ALLOW: cannot listen on ${message.failed}`))
        }
      })
    ])
  const running = status("running")
  return {
    spawned: running.then(() => connector, (error: unknown) => {
      connector.close()
      throw error
    }),
    listen: () => {
      const ready = status("ready")
      child.send({ listen: true })
      return ready
    }
  }
}
