/**
 * The offline verifier run as a third party runs it (`node verify.mjs export.car --jwks jwks.json`) on exports
 * built here from docs/audit-proofs.md (test/ExportBuilder.ts): a good export passes, and every kind of tampering,
 * by whoever edits the file or by a server that signs what it should not, fails naming what broke.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import { once } from "node:events"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import {
  type Block,
  type Header,
  encodeBlocks,
  exportOf,
  hashEvent,
  isAfter,
  jwksOf,
  type LogEvent,
  makeSigner,
  merkleRoot,
  seal,
  type Signer,
  signHeader,
  writeCar
} from "./ExportBuilder.ts"

const verifier = fileURLToPath(new URL("../verify.mjs", import.meta.url))
const dir = mkdtempSync(join(tmpdir(), "cairn-verify-audit-export-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

interface Run {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}
const run = async (args: ReadonlyArray<string>, stdin?: Buffer): Promise<Run> => {
  const child = spawn(process.execPath, [verifier, ...args], { stdio: ["pipe", "pipe", "pipe"] })
  let stdout = ""
  let stderr = ""
  child.stdout.on("data", (chunk) => (stdout += chunk))
  child.stderr.on("data", (chunk) => (stderr += chunk))
  child.stdin.on("error", () => {}) // the verifier may stop reading at the first failure
  child.stdin.end(stdin)
  const [code] = await once(child, "close")
  return { code, stdout, stderr }
}

let files = 0
const file = (contents: string | Buffer) => {
  const path = join(dir, `${++files}`)
  writeFileSync(path, contents)
  return path
}

const WORKSPACE = "ws-a"
const OTHER = "ws-b"
/**
 * The log: the workspace's streams agent-1, file-2, note-9 and `shared`, whose version 3 is another workspace's
 * (the export shows a gap there), among another workspace's events; sealed in blocks of 1, 3, 7, 2, 3, 5 and 7
 * events, block 4 holding none of the workspace's.
 */
const layout = [
  "A agent-1",
  "A agent-1", "A file-2", "B other",
  "A shared", "A agent-1", "B other", "A shared", "B shared", "A file-2", "A agent-1",
  "B other", "B other",
  "A shared", "A file-2", "B other",
  "A agent-1", "A shared", "A file-2", "B other", "A agent-1",
  "A file-2", "A agent-1", "B other", "A shared", "A note-9", "A agent-1", "A agent-1"
]
const sizes = [1, 3, 7, 2, 3, 5, 7]

const makeLog = (entries: ReadonlyArray<string>): Array<LogEvent> => {
  const versions = new Map<string, number>()
  return entries.map((entry, i) => {
    const [who, stream] = entry.split(" ") as [string, string]
    const version = (versions.get(stream) ?? 0) + 1
    versions.set(stream, version)
    return {
      workspace: who === "A" ? WORKSPACE : OTHER,
      // Two events a transaction; positions ten apart, so a test can move one without leaving its place.
      position: `${1000 + Math.floor(i / 2)}:${10 * (i + 1)}`,
      stream,
      version,
      eventId: `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`,
      type: `${stream}.Happened`,
      // Integer-like keys (JSON.stringify puts them first), nesting, non-ASCII text, null; some holding a sealed
      // secret, which the export leaves out (redacted, with the data's hash).
      data: i % 5 === 3
        ? { n: i, name: "API_KEY", sealed: { ciphertext: "bm90IGEgcmVhbCBjaXBoZXJ0ZXh0", keyVersion: 1 } }
        : { n: i, text: "café ✓ \u2028", nested: { b: [1, "x", null], a: true } },
      metadata: { "10": "ten", "2": "two", causationId: `c-${i}`, empty: {} },
      recordedAt: new Date(Date.UTC(2026, 10, 1, 0, 0, 0, 250 * i)).toISOString()
    }
  })
}
const log = makeLog(layout)
const workspaceEvents = log.filter((event) => event.workspace === WORKSPACE)

let signer: Signer
let attacker: Signer
let blocks: Array<Block>
let trusted: string
beforeAll(async () => {
  signer = await makeSigner()
  attacker = await makeSigner()
  blocks = await seal(log, sizes, signer)
  trusted = file(JSON.stringify(jwksOf(signer)))
})

/** The workspace's export of `sealed` as JSON values, for a test to edit, then as a CAR file. */
const values = (sealed: ReadonlyArray<Block> = blocks, since?: string, keys: unknown = jwksOf(signer)) =>
  structuredClone(exportOf(sealed, { workspace: WORKSPACE, keys, ...(since === undefined ? {} : { since }) }))
const carOf = async (exported: ReadonlyArray<unknown>) => file(await writeCar(await encodeBlocks(exported)))
const verify = async (exported: ReadonlyArray<unknown>, ...args: ReadonlyArray<string>) =>
  run([await carOf(exported), "--jwks", trusted, ...args])

const assertOk = (result: Run, summary: RegExp) => {
  assert.strictEqual(result.stdout.includes("FAILED"), false, result.stdout)
  assert.strictEqual(result.code, 0, result.stdout + result.stderr)
  assert.match(result.stdout, summary)
}
const assertFails = (result: Run, ...why: ReadonlyArray<RegExp>) => {
  assert.strictEqual(result.code, 1, result.stdout + result.stderr)
  assert.match(result.stdout, /^FAILED: /)
  assert.strictEqual(result.stdout.trim().split("\n").length, 1, result.stdout)
  for (const pattern of why) assert.match(result.stdout, pattern)
}

/** The exported seals and, in the third (block 3), an event of the `shared` stream in the middle of its block. */
const seals = (exported: Array<any>) => exported.filter((value) => value.kind === "seal")
const middleEvent = (exported: Array<any>) => seals(exported)[2].events[1]

describe("examples/verify-audit-export", () => {
  it("passes a good export, naming its events, seals, streams, positions and key", async () => {
    const exported = values()
    assert.strictEqual(seals(exported).length, 6) // block 4 holds none of the workspace's events
    assert.deepStrictEqual(seals(exported).map((seal) => seal.leaves.length), [1, 3, 7, 3, 5, 7])
    const result = await verify(exported)
    assertOk(
      result,
      new RegExp(
        `^OK: ${workspaceEvents.length} events in 6 seals, 4 streams, workspace ws-a, since 0, ` +
          `positions ${workspaceEvents[0]!.position} \\.\\. ${workspaceEvents.at(-1)!.position}, keys ${signer.kid}\n$`
      )
    )
    assert.strictEqual(result.stderr, "")
  })

  it("passes an export since a position in the middle of a block, and one with no events", async () => {
    const since = log[6]!.position
    const after = workspaceEvents.filter((event) => isAfter(event.position, since))
    assertOk(await verify(values(blocks, since)), new RegExp(`^OK: ${after.length} events in 4 seals, .* since ${since}, `))
    assertOk(await verify(values(blocks, log.at(-1)!.position)), /^OK: 0 events in 0 seals, 0 streams, .* positions - \.\. -/)
  })

  it("passes full blocks of 1,000 events", async () => {
    const many = makeLog(Array.from({ length: 2_500 }, (_, i) => `A stream-${i % 7}`))
    const result = await verify(values(await seal(many, [1_000, 1_000, 500], signer)))
    assertOk(result, /^OK: 2500 events in 3 seals, 7 streams/)
  })

  it("reads the export from stdin, given as - or not at all", async () => {
    const car = await writeCar(await encodeBlocks(values()))
    assertOk(await run(["-", "--jwks", trusted], car), /^OK: 20 events/)
    assertOk(await run(["--jwks", trusted], car), /^OK: 20 events/)
  })

  describe("fails when an exported event was edited", () => {
    const edits: ReadonlyArray<[string, (event: any) => void]> = [
      ["data", (event) => (event.data.nested.a = false)],
      ["metadata", (event) => (event.metadata.causationId = "c-forged")],
      ["type", (event) => (event.type = "shared.Forged")],
      ["version", (event) => (event.version += 1)],
      ["stream", (event) => (event.stream = "file-2")],
      ["eventId", (event) => (event.eventId = event.eventId.replace(/.$/, "f"))],
      ["recordedAt", (event) => (event.recordedAt = "2026-11-01T00:00:01.001Z")],
      ["position", (event) => (event.position = event.position.replace(/0$/, "1"))],
      ["prev", (event) => (event.prev = "0".repeat(64))]
    ]
    for (const [field, edit] of edits) {
      it(field, async () => {
        const exported = values()
        edit(middleEvent(exported))
        const { position, stream, version } = middleEvent(exported)
        assertFails(
          await verify(exported),
          /CAR block 4 \(seal of block 3\)/,
          new RegExp(`event ${position} \\(stream "${stream}", version ${version}\\)`),
          /hash\(e\) != leaves\[1\]/
        )
      })
    }
  })

  describe("a redacted event (a sealed secret left out)", () => {
    const redacted = (exported: Array<any>) => seals(exported).flatMap((seal) => seal.events).find((event) => event.redacted === true)
    it("passes with the hash its data was sealed under, and shows no ciphertext", async () => {
      const exported = values()
      const event = redacted(exported)
      assert.isDefined(event)
      assert.notProperty(event.data, "sealed")
      assert.notInclude(JSON.stringify(exported), "bm90IGEgcmVhbCBjaXBoZXJ0ZXh0")
      assertOk(await verify(exported), /^OK: /)
    })
    it("fails when its dataHash, its shown data's place, or its redacted mark was changed", async () => {
      for (const edit of [
        (event: any) => (event.dataHash = "0".repeat(64)),
        (event: any) => delete event.redacted,
        (event: any) => (event.dataHash = "not hex")
      ]) {
        const exported = values()
        edit(redacted(exported))
        assertFails(await verify(exported))
      }
    })
  })

  it("fails when a leaf was edited", async () => {
    const exported = values()
    seals(exported)[2].leaves[2] = "f".repeat(64) // another workspace's event
    assertFails(await verify(exported), /seal of block 3.*merkle\(leaves\) != header\.root/)
    // The same hash in capitals decodes to the same bytes, and is refused all the same.
    const capitals = values()
    seals(capitals)[2].leaves[2] = seals(capitals)[2].leaves[2].toUpperCase()
    assertFails(await verify(capitals), /seal of block 3\): leaves are not a list of lowercase hex SHA-256 hashes/)
  })

  it("fails when the header's root or count was edited after signing", async () => {
    for (const edit of [(header: any) => (header.root = "a".repeat(64)), (header: any) => (header.count += 1)]) {
      const exported = values()
      edit(seals(exported)[1].header)
      assertFails(await verify(exported), /seal of block 2.*the header is not the JWS payload/)
    }
  })

  it("fails when the server signed a header whose root or count is wrong", async () => {
    const lying = async (header: (header: Header) => Header) => values(await seal(log, sizes, signer, { header }))
    assertFails(
      await verify(await lying((header) => header.block === 5 ? { ...header, root: merkleRoot([header.root, header.root]) } : header)),
      /CAR block 5 \(seal of block 5\): merkle\(leaves\) != header\.root/
    )
    assertFails(
      await verify(await lying((header) => header.block === 5 ? { ...header, count: 4 } : header)),
      /seal of block 5\): header\.count 4 != leaves\.length 3/
    )
    assertFails(
      await verify(await lying((header) => header.block === 3 ? { ...header, prev: "b".repeat(64) } : header)),
      /seal of block 3\): header\.prev is not the hash of block 2/
    )
  })

  it("fails when a seal was signed by a key the trusted JWKS does not hold", async () => {
    const forged = await seal(log, sizes, attacker)
    // The export carries the forger's key: without --jwks it passes (with a warning), with it it fails.
    const exported = values(forged, undefined, jwksOf(attacker))
    const unchecked = await run([await carOf(exported)])
    assertOk(unchecked, new RegExp(`^OK: 20 events .* keys ${attacker.kid}`))
    assert.match(unchecked.stderr, /^warning: no --jwks given/)
    assertFails(
      await verify(exported),
      new RegExp(`CAR block 2 \\(seal of block 1\\): signed by key ${attacker.kid}, which is not in the trusted JWKS`)
    )
  })

  it("fails when a byte of a signature was flipped", async () => {
    const exported = values()
    const [header, payload, signature] = seals(exported)[3].signature.split(".")
    const bytes = Buffer.from(signature, "base64url")
    bytes[10] ^= 1
    seals(exported)[3].signature = `${header}.${payload}.${bytes.toString("base64url")}`
    assertFails(await verify(exported), new RegExp(`seal of block 5\\): the JWS signature does not verify under key ${signer.kid}`))
  })

  it("fails when a seal was re-signed with the same key id but another key", async () => {
    const exported = values()
    const target = seals(exported)[0]
    const impostor: Signer = { ...attacker, kid: signer.kid }
    target.signature = await signHeader(JSON.stringify(target.header), impostor)
    assertFails(await verify(exported), /seal of block 1\): the JWS signature does not verify/)
  })

  it("fails when a block's bytes do not hash to its CID", async () => {
    const car = await encodeBlocks(values())
    const edited = car[3]!.bytes.slice()
    edited[edited.indexOf(0x22 /* " */, 20) + 1] ^= 1
    car[3] = { cid: car[3]!.cid, bytes: edited }
    assertFails(await run([file(await writeCar(car)), "--jwks", trusted]), /^FAILED: CAR block 4: the block's bytes do not hash to its CID/)
  })

  it("fails when the CAR's root is not the manifest", async () => {
    const car = await encodeBlocks(values())
    assertFails(await run([file(await writeCar(car, car[1]!.cid)), "--jwks", trusted]), /CAR block 1: the CAR header's only root/)
  })

  it("fails when the file was cut short, at a block's end or within one", async () => {
    const exported = values()
    assertFails(await verify(exported.slice(0, -1)), /the file is cut short: no end block after CAR block 7/)
    assertFails(await verify(exported.slice(0, 3)), /the file is cut short: no end block after CAR block 3/)
    const car = await writeCar(await encodeBlocks(exported))
    assertFails(await run([file(car.subarray(0, car.length - 30)), "--jwks", trusted]), /after CAR block 7: .*cut short mid-block/)
  })

  it("fails when the end's counts are wrong, or a block follows it", async () => {
    for (const edit of [(end: any) => (end.events -= 1), (end: any) => (end.seals += 1), (end: any) => (end.last = "1:1")]) {
      const exported = values()
      edit(exported.at(-1))
      assertFails(await verify(exported), /CAR block 8: end says .*; the export holds 20 events, 6 seals/)
    }
    const exported = values()
    assertFails(await verify([...exported, exported.at(-1)]), /CAR block 9: a block follows the end/)
  })

  it("fails when events are out of order", async () => {
    // Swapped in the export: their indexes go back.
    const swapped = values()
    const events = seals(swapped)[2].events
    ;[events[1], events[2]] = [events[2], events[1]]
    assertFails(await verify(swapped), /seal of block 3\), event \S+ .*: index 1 is not after the previous event's \(3\)/)
    // Sealed out of log order by the server: indexes increase, positions do not.
    const misordered = [...log]
    ;[misordered[4], misordered[5]] = [misordered[5]!, misordered[4]!]
    assertFails(
      await verify(values(await seal(misordered, sizes, signer))),
      new RegExp(`seal of block 3\\), event ${log[4]!.position} .*: not after the previous event in log order`)
    )
    // Seals in the wrong order.
    const exported = values()
    ;[exported[2], exported[3]] = [exported[3], exported[2]]
    assertFails(await verify(exported), /CAR block 4 \(seal of block 2\): comes after block 3/)
  })

  it("fails when an event does not chain from the previous version of its stream", async () => {
    // agent-1 version 3 signed with a prev that is not version 2's hash: its leaf matches, its chain does not.
    const target = log.find((event) => event.stream === "agent-1" && event.version === 3)!
    const prevOf = (event: LogEvent, honest: string) => event === target ? hashEvent("0".repeat(64), log[1]!) : honest
    assertFails(
      await verify(values(await seal(log, sizes, signer, { prevOf }))),
      new RegExp(`event ${target.position} \\(stream "agent-1", version 3\\): stream chain broken: prev is not the hash of version 2`)
    )
  })

  describe("--jwks", () => {
    it("takes the keys from the file given, never from the manifest", async () => {
      // The manifest carries only the forger's key; the file the real one: the export passes, without a warning.
      const result = await verify(values(blocks, undefined, jwksOf(attacker)))
      assertOk(result, new RegExp(`^OK: 20 events .* keys ${signer.kid}`))
      assert.strictEqual(result.stderr, "")
      // The manifest carries the real key, the file only another: it fails.
      const car = await carOf(values())
      assertFails(await run([car, "--jwks", file(JSON.stringify(jwksOf(attacker)))]), /which is not in the trusted JWKS/)
    })

    it("fetches the keys from a URL", async () => {
      const server = createServer((request, response) => {
        if (request.url !== "/.well-known/jwks.json") return void response.writeHead(404).end()
        response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(jwksOf(signer)))
      })
      server.listen(0, "127.0.0.1")
      await once(server, "listening")
      try {
        const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
        const car = await carOf(values(blocks, undefined, jwksOf(attacker)))
        assertOk(await run([car, "--jwks", `${base}/.well-known/jwks.json`]), /^OK: 20 events/)
        const missing = await run([car, "--jwks", `${base}/nothing`])
        assert.strictEqual(missing.code, 2)
        assert.match(missing.stderr, /cannot read the JWKS .*404/)
      } finally {
        server.close()
      }
    })
  })

  it("exits 2 on a usage error", async () => {
    for (const args of [["--nope"], ["a.car", "b.car"], ["--jwks"], [join(dir, "missing.car")]]) {
      const result = await run(args)
      assert.strictEqual(result.code, 2, `${args}: ${result.stdout}${result.stderr}`)
      assert.match(result.stderr, /usage: node verify\.mjs/)
    }
  })
})
