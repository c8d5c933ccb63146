#!/usr/bin/env node
/**
 * Checks a Cairn audit export (`GET /v0/audit/export`) offline, following docs/audit-proofs.md ("Checking an
 * export") and nothing of Cairn's own code, so that anyone holding the installation's public keys can run it:
 *
 *   node verify.mjs [<export.car> | -] [--jwks <jwks.json | https://<host>/.well-known/jwks.json>]
 *
 * The CAR is read as a stream, one block at a time: an export of a million events is hundreds of MB. Prints a
 * one-line summary and exits 0 when every check passes; prints `FAILED: …` for the first broken one and exits 1;
 * exits 2 on a usage error or when a file or the JWKS cannot be read.
 */
import { CarBlockIterator } from "@ipld/car/iterator"
import { createHash, createPublicKey, hash as hashOnce, verify as verifySignature } from "node:crypto"
import { createReadStream, openSync, readFileSync } from "node:fs"

const JSON_CODEC = 0x0200
const SHA2_256 = 0x12
const ZERO = Buffer.alloc(32)
const ZERO_HEX = ZERO.toString("hex")
const FORMAT = "cairn-audit-export/1"
const POSITION = /^(\d+):(\d+)$/
const USAGE = "usage: node verify.mjs [<export.car> | -] [--jwks <jwks.json file or http(s) URL>]"

/** A broken check: what failed, where. */
class Failure extends Error {}
/** The checker cannot run (the trusted JWKS cannot be read): no verdict on the export. */
class Unusable extends Error {}
const fail = (message) => {
  throw new Failure(message)
}
const sha256 = () => createHash("sha256")

/**
 * hash(e) = sha256(prev || utf8(canonical)), written into one reused buffer and hashed in one call: a million
 * events spend most of their time here, and a Hash object and two updates per event cost twice as much.
 */
let scratch = Buffer.alloc(1 << 16)
const hashEvent = (prevHex, canonical) => {
  const most = 32 + canonical.length * 3 // UTF-8 takes at most 3 bytes per UTF-16 unit
  if (scratch.length < most) scratch = Buffer.alloc(2 * most)
  if (scratch.write(prevHex, 0, "hex") !== 32) return undefined // not hex: no hash matches it
  const length = 32 + scratch.write(canonical, 32, "utf8")
  return hashOnce("sha256", scratch.subarray(0, length), "hex")
}

/** `"<tx>:<gp>"` or `"0"` as [tx, gp]; BigInt because transaction ids and positions are 64-bit. */
const parsePosition = (text, what, allowStart) => {
  if (allowStart && text === "0") return [0n, 0n]
  const match = typeof text === "string" ? POSITION.exec(text) : null
  if (match === null) fail(`${what}: ${JSON.stringify(text)} is not a log position "<transactionId>:<globalPosition>"`)
  return [BigInt(match[1]), BigInt(match[2])]
}
/** Log order: by transaction id, then global position. */
const compare = (a, b) => a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0

/**
 * The leaves as bytes, or undefined unless every one is 64 lowercase hex digits. Decoded all at once: hex decoding
 * stops at the first character that is not a hex digit, so a short result means a bad one.
 */
const decodeLeaves = (leaves) => {
  if (!Array.isArray(leaves) || !leaves.every((leaf) => typeof leaf === "string" && leaf.length === 64)) return
  const text = leaves.join("")
  const bytes = Buffer.from(text, "hex")
  if (bytes.length !== 32 * leaves.length || text.toLowerCase() !== text) return
  return leaves.map((_, i) => bytes.subarray(32 * i, 32 * (i + 1)))
}

/** merkle(hashes): pairs hashed as sha256(0x01 || l || r), an odd last one carried up unchanged. */
const merkleRoot = (hashes) => {
  const pair = Buffer.alloc(65, 1)
  let level = hashes
  while (level.length > 1) {
    const next = []
    for (let i = 0; i < level.length; i += 2) {
      if (i + 1 === level.length) {
        next.push(level[i])
      } else {
        level[i].copy(pair, 1)
        level[i + 1].copy(pair, 33)
        next.push(hashOnce("sha256", pair, "buffer"))
      }
    }
    level = next
  }
  return level[0].toString("hex")
}

/** RFC 7638 thumbprint of an EC key: what a seal's `kid` names when the JWKS entry carries no `kid` of its own. */
const thumbprint = (jwk) =>
  sha256().update(JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y })).digest("base64url")

/** A JWKS's P-256 keys by kid. Other kinds of key cannot have made an ES256 signature, so they are left out. */
const keysOf = (jwks, where) => {
  if (jwks === null || typeof jwks !== "object" || !Array.isArray(jwks.keys)) fail(`${where} is not a JWKS`)
  const keys = new Map()
  for (const jwk of jwks.keys) {
    if (jwk?.kty !== "EC" || jwk.crv !== "P-256") continue
    keys.set(typeof jwk.kid === "string" ? jwk.kid : thumbprint(jwk), createPublicKey({ key: jwk, format: "jwk" }))
  }
  return keys
}

const loadJwks = async (source) => {
  try {
    const text = /^https?:\/\//.test(source)
      ? await fetch(source).then((response) => {
        if (!response.ok) throw new Error(`GET ${source}: ${response.status} ${response.statusText}`)
        return response.text()
      })
      : readFileSync(source, "utf8")
    return keysOf(JSON.parse(text), `--jwks ${source}`)
  } catch (error) {
    throw new Unusable(`cannot read the JWKS ${source}: ${error.message}`)
  }
}

const utf8 = new TextDecoder("utf-8", { fatal: true })
const decodeJson = (bytes, where) => {
  try {
    return JSON.parse(utf8.decode(bytes))
  } catch (error) {
    return fail(`${where}: not a JSON block (${error.message})`)
  }
}

/** Check 1: the block's bytes are what its CID names (CIDv1, json, SHA-256). */
const checkCid = (cid, bytes, where) => {
  if (cid.version !== 1 || cid.code !== JSON_CODEC || cid.multihash.code !== SHA2_256) {
    fail(`${where}: CID ${cid} is not a CIDv1 of codec json (0x0200) with a sha2-256 multihash`)
  }
  if (Buffer.compare(sha256().update(bytes).digest(), cid.multihash.digest) !== 0) {
    fail(`${where}: the block's bytes do not hash to its CID ${cid}`)
  }
}

/** Check 2's signature: the JWS payload is `JSON.stringify(header)`, signed (ES256) by a trusted key. */
const checkSignature = (seal, headerText, keys, where) => {
  const parts = typeof seal.signature === "string" ? seal.signature.split(".") : []
  if (parts.length !== 3) fail(`${where}: signature is not a compact JWS`)
  let protectedHeader
  try {
    protectedHeader = JSON.parse(Buffer.from(parts[0], "base64url").toString("utf8"))
  } catch {
    fail(`${where}: the JWS protected header is not JSON`)
  }
  const { alg, kid, typ } = protectedHeader
  if (alg !== "ES256" || typ !== "cairn-seal" || typeof kid !== "string") {
    fail(`${where}: JWS header ${JSON.stringify(protectedHeader)} is not {"alg":"ES256","kid":…,"typ":"cairn-seal"}`)
  }
  // Compared as base64url text: decoding is lenient, so two encodings could decode to the same payload.
  if (parts[1] !== Buffer.from(headerText, "utf8").toString("base64url")) {
    fail(`${where}: the header is not the JWS payload (the header or the signature was changed)`)
  }
  const key = keys.get(kid)
  if (key === undefined) fail(`${where}: signed by key ${kid}, which is not in the trusted JWKS`)
  const signature = Buffer.from(parts[2], "base64url")
  const signed = Buffer.from(`${parts[0]}.${parts[1]}`, "ascii")
  if (!verifySignature("sha256", signed, { key, dsaEncoding: "ieee-p1363" }, signature)) {
    fail(`${where}: the JWS signature does not verify under key ${kid}`)
  }
  return kid
}

/** What the checks carry from block to block. */
const newState = () => ({
  manifest: undefined,
  since: undefined,
  keys: undefined,
  end: undefined,
  seals: 0,
  events: 0,
  first: null,
  last: null, // [tx, gp] of the last event, or `since` before the first
  lastText: null,
  previousSeal: undefined, // { block, hash, last } of the seal before
  streams: new Map(), // stream -> { version, hash } of its last exported event (check 3)
  keyIds: new Set()
})

/** Check 1: the first block is the CAR's only root and a manifest; its keys are the fallback JWKS. */
const checkManifest = async (state, manifest, cid, roots, jwksSource, where) => {
  if (roots.length !== 1 || !roots[0].equals(cid)) fail(`${where}: the CAR header's only root is not the first block`)
  if (manifest?.format !== FORMAT) fail(`${where}: not a manifest of format ${FORMAT}`)
  state.manifest = manifest
  state.since = parsePosition(manifest.since, `${where}: manifest since`, true)
  state.last = state.since
  if (jwksSource !== undefined) {
    state.keys = await loadJwks(jwksSource)
  } else {
    process.stderr.write(
      "warning: no --jwks given: the seals are checked against the keys the export carries itself, which proves only\n" +
        "that the file is consistent, not who sealed it; pass --jwks https://<host>/.well-known/jwks.json\n"
    )
    state.keys = keysOf(manifest.keys, `${where}: manifest keys`)
  }
}

const checkSeal = (state, seal, where) => {
  const { header, leaves, events } = seal
  if (!Number.isInteger(seal.block) || seal.block < 1) fail(`${where}: seal has no block number`)
  where = `${where} (seal of block ${seal.block})`
  if (header === null || typeof header !== "object") fail(`${where}: no header`)
  if (header.v !== 1 || header.block !== seal.block) fail(`${where}: header is not v 1 of block ${seal.block}`)
  const previous = state.previousSeal
  if (previous !== undefined && seal.block <= previous.block) fail(`${where}: comes after block ${previous.block}`)

  const headerText = JSON.stringify(header)
  state.keyIds.add(checkSignature(seal, headerText, state.keys, where))

  const hashes = decodeLeaves(leaves)
  if (hashes === undefined) fail(`${where}: leaves are not a list of lowercase hex SHA-256 hashes`)
  if (header.count !== leaves.length) fail(`${where}: header.count ${header.count} != leaves.length ${leaves.length}`)
  if (leaves.length === 0 || merkleRoot(hashes) !== header.root) fail(`${where}: merkle(leaves) != header.root`)

  // Not among the spec's listed checks, but what a header means: the block's span, and its link to the block
  // before when that one is in the export too.
  const after = parsePosition(header.after, `${where}: header.after`, true)
  const last = parsePosition(header.last, `${where}: header.last`, false)
  if (seal.block === 1 && (header.prev !== ZERO_HEX || header.after !== "0")) {
    fail(`${where}: block 1 does not start the chain (header.prev is not ZERO or header.after is not "0")`)
  }
  if (previous !== undefined && seal.block === previous.block + 1) {
    if (header.prev !== previous.hash) fail(`${where}: header.prev is not the hash of block ${previous.block}`)
    if (header.after !== previous.last) fail(`${where}: header.after is not block ${previous.block}'s last`)
  }
  state.previousSeal = { block: seal.block, hash: sha256().update(headerText, "utf8").digest("hex"), last: header.last }

  if (!Array.isArray(events)) fail(`${where}: events is not a list`)
  let previousIndex = -1
  for (const event of events) {
    checkEvent(state, event, leaves, previousIndex, after, last, where)
    previousIndex = event.index
  }
  state.seals++
}

/** Check 2 for one event (its hash is its leaf; index and log order increase), then check 3 (its stream's chain). */
const checkEvent = (state, event, leaves, previousIndex, after, last, where) => {
  const position = parsePosition(event?.position, `${where}: event ${JSON.stringify(event?.position)}`, false)
  const { index, prev, stream, version, eventId, type, data, metadata, recordedAt, redacted, dataHash } = event
  where = `${where}, event ${event.position} (stream ${JSON.stringify(stream)}, version ${version})`
  if (
    typeof stream !== "string" || !Number.isInteger(version) || typeof eventId !== "string" ||
    typeof type !== "string" || typeof recordedAt !== "string" || data === undefined || metadata === undefined ||
    typeof prev !== "string" || prev.length !== 64 ||
    (redacted === true && (typeof dataHash !== "string" || !/^[0-9a-f]{64}$/.test(dataHash)))
  ) fail(`${where}: a field is missing or of the wrong type`)
  if (!Number.isInteger(index) || index <= previousIndex || index >= leaves.length) {
    fail(`${where}: index ${index} is not after the previous event's (${previousIndex}) and within the leaves`)
  }
  if (compare(position, state.last) <= 0) {
    fail(`${where}: not after ${state.events === 0 ? "since" : "the previous event"} in log order`)
  }
  if (compare(position, after) <= 0 || compare(position, last) > 0) {
    fail(`${where}: outside the block's span (header.after, header.last]`)
  }

  const [, transactionId, globalPosition] = POSITION.exec(event.position)
  // The data goes in by its hash; a redacted event (a sealed secret's ciphertext left out) gives the hash it was sealed under.
  const hashOfData = redacted === true ? dataHash : hashOnce("sha256", JSON.stringify(data), "hex")
  const canonical = JSON.stringify([
    "cairn-event/1", transactionId, globalPosition, stream, version, eventId, type, hashOfData, metadata, recordedAt
  ])
  const hash = hashEvent(prev, canonical)
  if (hash !== leaves[index]) fail(`${where}: hash(e) != leaves[${index}] (the event or its prev was changed)`)

  const before = state.streams.get(stream)
  if (before !== undefined && version === before.version + 1 && prev !== before.hash) {
    fail(`${where}: stream chain broken: prev is not the hash of version ${before.version}`)
  }
  state.streams.set(stream, { version, hash })
  state.first ??= event.position
  state.last = position
  state.lastText = event.position
  state.events++
}

/** Check 1's end: its counts are what came before. */
const checkEnd = (state, end, where) => {
  if (end.events !== state.events || end.seals !== state.seals || end.last !== state.lastText) {
    fail(
      `${where}: end says ${end.events} events, ${end.seals} seals, last ${end.last}; ` +
        `the export holds ${state.events} events, ${state.seals} seals, last ${state.lastText}`
    )
  }
  state.end = end
}

const verifyExport = async (input, jwksSource) => {
  const state = newState()
  let number = 0
  const malformed = (error) =>
    fail(`after CAR block ${number}: not a readable CAR v1 file, or cut short mid-block (${error.message})`)
  const reader = await CarBlockIterator.fromIterable(input).catch(malformed)
  if (reader.version !== 1) fail(`the file is a CAR v${reader.version}, not v1`)
  const roots = await reader.getRoots()
  const blocks = reader[Symbol.asyncIterator]()
  for (;;) {
    const next = await blocks.next().catch(malformed)
    if (next.done) break
    const { cid, bytes } = next.value
    const where = `CAR block ${++number}`
    if (state.end !== undefined) fail(`${where}: a block follows the end`)
    checkCid(cid, bytes, where)
    const value = decodeJson(bytes, where)
    if (number === 1) await checkManifest(state, value, cid, roots, jwksSource, where)
    else if (value?.kind === "seal") checkSeal(state, value, where)
    else if (value?.kind === "end") checkEnd(state, value, where)
    else fail(`${where}: neither a seal nor the end`)
  }
  if (number === 0) fail("the file holds no block")
  if (state.end === undefined) fail(`the file is cut short: no end block after CAR block ${number}`)
  return state
}

const summary = (state) =>
  `OK: ${state.events} events in ${state.seals} seals, ${state.streams.size} streams, ` +
  `workspace ${state.manifest.workspaceId}, since ${state.manifest.since}, ` +
  `positions ${state.first ?? "-"} .. ${state.lastText ?? "-"}, keys ${[...state.keyIds].join(", ") || "-"}`

const usage = (message) => {
  process.stderr.write(`${message}\n${USAGE}\n`)
  process.exit(2)
}

const parseArguments = (args) => {
  let file, jwks
  for (let i = 0; i < args.length; i++) {
    if (args[i] === "--jwks") {
      jwks = args[++i]
      if (jwks === undefined) usage("--jwks needs a file or a URL")
    } else if (args[i] === "-h" || args[i] === "--help") {
      process.stdout.write(`${USAGE}\n`)
      process.exit(0)
    } else if (args[i].startsWith("-") && args[i] !== "-") {
      usage(`unknown option ${args[i]}`)
    } else if (file !== undefined) {
      usage("one export at a time")
    } else {
      file = args[i]
    }
  }
  return { file, jwks }
}

const main = async () => {
  const { file, jwks } = parseArguments(process.argv.slice(2))
  let input = process.stdin
  if (file !== undefined && file !== "-") {
    // Opened here so that a missing file is a usage error (2), not a verdict on the export (1).
    try {
      input = createReadStream(null, { fd: openSync(file, "r"), highWaterMark: 1 << 20 })
    } catch (error) {
      usage(`cannot read ${file}: ${error.message}`)
    }
  }
  try {
    process.stdout.write(`${summary(await verifyExport(input, jwks))}\n`)
  } catch (error) {
    if (error instanceof Unusable) usage(error.message)
    // A check that threw on a malformed value (a TypeError, say) is still a verdict on the export.
    process.stdout.write(`FAILED: ${error.message}\n`)
    process.exitCode = 1
    input.destroy()
  }
}

await main()
