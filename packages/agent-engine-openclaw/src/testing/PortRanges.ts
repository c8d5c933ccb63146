/**
 * Gateway port ranges for tests, reserved across every test process on the machine. A gateway listens on a fixed
 * port (`basePort + 120·slot`, and OpenClaw derives more up to +110), so tests cannot ask the kernel for port 0:
 * test files running in parallel, and two whole suites run at once on one machine (as CI may), would otherwise
 * start gateways on the same ports. A reservation is a lock file per block of ports, made with O_EXCL in the
 * system's temp directory and naming the process that holds it (a block is one agent slot's 120 ports); it is given back when that process exits, and one
 * left by a process that is gone is taken over. Blocks lie below the kernel's ephemeral range (32768 and up), so
 * servers on port 0 and outgoing connections never land in them.
 */
import { Effect, Layer } from "effect"
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { processExists } from "../GatewayProcess.ts"

const first = 10_000
/** One agent slot's ports. */
const blockSize = 120
const blocks = Math.floor((32_768 - first) / blockSize)
const lockDir = Path.join(Os.tmpdir(), "cairn-test-ports")

const held: Array<string> = []
let releaseOnExit = false

/** Takes one block's lock, or takes it over from a process that is gone; false when another process holds it. */
const take = (block: number): boolean => {
  const file = Path.join(lockDir, String(block))
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      Fs.writeFileSync(file, String(process.pid), { flag: "wx" })
      held.push(file)
      return true
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error
    }
    let owner: number
    try {
      owner = Number(Fs.readFileSync(file, "utf8").trim())
    } catch (error) {
      // Given back by its holder between our attempt and this read: try to take it again.
      if ((error as NodeJS.ErrnoException).code === "ENOENT") continue
      throw error
    }
    if (owner > 0 && processExists(owner)) return false
    // A stale lock: removed, then taken with O_EXCL again (a process racing for it finds it taken).
    Fs.rmSync(file, { force: true })
  }
  return false
}

const release = (file: string) => {
  const index = held.indexOf(file)
  if (index === -1) return
  Fs.rmSync(file, { force: true })
  held.splice(index, 1)
}

/** Takes `needed` free blocks in a row; returns the first port and the lock files, or throws when none are left. */
const reserve = (ports: number): { readonly port: number; readonly files: ReadonlyArray<string> } => {
  Fs.mkdirSync(lockDir, { recursive: true })
  if (!releaseOnExit) {
    releaseOnExit = true
    process.once("exit", () => [...held].forEach(release))
  }
  const needed = Math.ceil(ports / blockSize)
  // Start at a place that differs between processes, so that parallel processes rarely contend for one lock.
  const offset = process.pid % blocks
  for (let i = 0; i < blocks; i++) {
    const start = (offset + i) % blocks
    if (start + needed > blocks) continue
    const taken: Array<string> = []
    for (let block = start; block < start + needed; block++) {
      if (!take(block)) break
      taken.push(held[held.length - 1]!)
    }
    if (taken.length === needed) return { port: first + start * blockSize, files: taken }
    taken.forEach(release)
  }
  throw new Error(`no free test port range of ${ports} ports: every block in ${lockDir} is held`)
}

/**
 * The base port of an engine whose agents use at most `slots` slots (120 ports each; an agent keeps its slot until
 * it is destroyed), held by no other test process on this machine until this process exits.
 */
export const reserveGatewayPorts = (slots = 4): number => reserve(blockSize * slots).port

/** The ports of this process's block for single ports (`reserveTestPort`), and the next one to give. */
let singles: { readonly first: number; next: number } | undefined

/**
 * A port for a test's server, held by no other test process on this machine until this process exits: from a
 * reserved block below the kernel's ephemeral range, so no server on port 0 or outgoing connection takes it between
 * the choice and the server's bind (as happened to a port the kernel had just handed out and taken back). Ports
 * something else already listens on are skipped.
 */
export const reserveTestPort = async (): Promise<number> => {
  while (true) {
    if (singles === undefined || singles.next >= singles.first + blockSize) {
      const first = reserve(blockSize).port
      singles = { first, next: first }
    }
    const port = singles.next++
    if (await bindable(port)) return port
  }
}

const bindable = (port: number) =>
  new Promise<boolean>((resolve) => {
    const server = Net.createServer()
    server.once("error", () => resolve(false))
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)))
  })

/** The same, given back when the scope closes: for engines that live in one layer or one test. */
export const gatewayPorts = (slots = 4) =>
  Effect.acquireRelease(
    Effect.sync(() => reserve(blockSize * slots)),
    ({ files }) => Effect.sync(() => files.forEach(release))
  ).pipe(Effect.map(({ port }) => port))

/** A layer built on reserved gateway ports, which it gives back when it is released. */
export const onGatewayPorts = <A, E, R>(slots: number, make: (basePort: number) => Layer.Layer<A, E, R>) =>
  Layer.unwrap(Effect.map(gatewayPorts(slots), make))
