/**
 * The tamper-evident log through the real routes (issue 37 item 4, docs/audit-proofs.md): `POST /admin/audit/verify`
 * seals what is pending and checks the whole log; every column of `cairn_events` edited in the database (and a row
 * deleted, one forged, a stored hash, leaf set, root or signature changed) is found and named, and the log verifies
 * again once the edit is undone. `GET /v0/audit/export` gives the workspace's sealed events with their proofs, read
 * back here with `@ipld/car` and checked by the offline verifier program, which also refuses an edited export.
 */
import { AuditLog, LogSeals, SealInterval, type VerifyReport } from "@cairn/application"
import { ApiKit, TestRuntime } from "@cairn/runtime/testing"
import { EventStore, ExpectedVersion } from "@cairn/event-store"
import { CarReader } from "@ipld/car"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Duration, Effect, Fiber } from "effect"
import { SqlClient } from "effect/sql"
import { execFile } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const api = TestRuntime.makeTestApi()
const { request, runtime, web } = api
afterAll(api.dispose)
const { newAgent } = ApiKit.make(request)

const verifier = fileURLToPath(new URL("../../../examples/verify-audit-export/verify.mjs", import.meta.url))


const verify = async (): Promise<VerifyReport> => {
  const answer = await request("POST", "/admin/audit/verify", TestRuntime.adminToken)
  assert.strictEqual(answer.status, 200, JSON.stringify(answer.body))
  return answer.body!["data"] as VerifyReport
}

const sql = <A>(f: (sql: SqlClient.SqlClient) => import("effect").Effect.Effect<A, unknown>) => runtime.runPromise(SqlClient.SqlClient.use(f))

const rows = async () => ((await sql((s) => s<{ n: number }>`SELECT count(*)::int AS n FROM cairn_events`)) as Array<{ n: number }>)[0]!.n

/**
 * Waits until the log's reader sees every row: it reads behind a fence that a transaction still open anywhere on the
 * server holds back (docs/event-store.md), which other suites' databases on CI's Postgres do for a moment.
 */
const allVisible = async () => {
  for (let tries = 0; tries < 400; tries++) {
    const report = await verify()
    if (report.events + report.unsealed === await rows()) return report
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  assert.fail("the log's reader never saw every row")
}

/** What the server's sealer does in the background (TestRuntime runs no background workers), once it sees every row. */
const seal = async (seals?: LogSeals["Service"]) => {
  await allVisible()
  return runtime.runPromise(seals === undefined ? AuditLog.use((log) => log.sealPending) : seals.sealPending)
}

let owner: string
let agentId: string
let other: string
let workspaceId: string
/** A sealed event of the workspace to edit: its secret's creation. */
let target: { readonly position: bigint; readonly stream: string; readonly version: number }

beforeAll(async () => {
  workspaceId = await api.workspace(5)
  owner = (await api.key(workspaceId)).token
  other = (await api.key(await api.workspace(5))).token
  agentId = await newAgent(owner, "audited")
  assert.strictEqual((await request("POST", "/v0/secrets", owner, { name: "AUDITED_KEY", value: "sk-very-secret-value" })).status, 201)
  await newAgent(other, "someone-else")
  const [row] = await sql((s) => s<{ global_position: string; stream_id: string; version: string }>`
    SELECT global_position::text, stream_id, version::text FROM cairn_events WHERE type = 'SecretCreated' LIMIT 1`)
  target = { position: BigInt(row!.global_position), stream: row!.stream_id, version: Number(row!.version) }
  // Sealed before any test edits it.
  await seal()
  assert.strictEqual((await verify()).ok, true)
}, 120_000)

describe("verify", () => {
  it("checks every event and block, and records where the chain began", async () => {
    const report = await verify()
    assert.strictEqual(report.ok, true, JSON.stringify(report.broken))
    assert.isAbove(report.events, 5)
    assert.isAtLeast(report.blocks, 1)
    assert.strictEqual(report.unsealed, 0)
    assert.isNotNull(report.chain)
    assert.isNotNull(report.chain!.backfilledThrough)
    assert.strictEqual(report.events, await rows())

    // Recorded since: not sealed until the sealer's next round, then checked like the rest.
    assert.strictEqual((await request("POST", "/v0/secrets", owner, { name: "LATER_KEY", value: "v" })).status, 201)
    const pending = await allVisible()
    assert.strictEqual(pending.ok, true)
    assert.isAtLeast(pending.unsealed, 1)
    await seal()
    const sealed = await verify()
    assert.strictEqual(sealed.unsealed, 0)
    assert.strictEqual(sealed.events, report.events + pending.unsealed)
    assert.strictEqual(sealed.blocks, report.blocks + 1)
  })

  it("chains each sealer's blocks from the stored ones: one restarted (it remembers no stream), two taking turns (as a cluster's nodes)", async () => {
    // Another event on streams sealed before: the agent's.
    const touch = async (description: string) =>
      assert.strictEqual((await request("PATCH", `/v0/agents/${agentId}`, owner, { description })).status, 200)
    await touch("after a restart")
    const other = await runtime.runPromise(LogSeals.make)
    assert.isAtLeast(await seal(other), 1)
    // The first sealer again: the agent's stream moved on under it.
    await touch("sealed by the first node again")
    await seal()
    await touch("and by the other")
    assert.isAtLeast(await seal(other), 1)
    const report = await verify()
    assert.strictEqual(report.ok, true, JSON.stringify(report.broken))
    assert.strictEqual(report.unsealed, 0)
  })

  it("runs one background sealer at a time: a second one on the database waits while the first holds the lease", async () => {
    const run = (seals: LogSeals["Service"]) =>
      runtime.runFork(seals.run.pipe(Effect.provideService(SealInterval, Duration.millis(20))))
    const [first, second] = await Promise.all([runtime.runPromise(LogSeals.make), runtime.runPromise(LogSeals.make)])
    /** Until every row is sealed (the background sealers' work: seen by the reader, then sealed). */
    const sealedAll = async () => {
      let report = await verify()
      for (let tries = 0; tries < 400 && report.events < await rows(); tries++) {
        await new Promise((resolve) => setTimeout(resolve, 50))
        report = await verify()
      }
      return report
    }
    const secret = async (name: string) => assert.strictEqual((await request("POST", "/v0/secrets", owner, { name, value: "v" })).status, 201)
    // The first takes the lease and seals; the second starts once it has.
    const firstRun = run(first)
    await secret("LEASED_1")
    assert.strictEqual((await sealedAll()).unsealed, 0)
    const secondRun = run(second)
    try {
      // Both run; events keep being sealed, and the log verifies.
      for (let i = 2; i < 6; i++) await secret(`LEASED_${i}`)
      const report = await sealedAll()
      assert.strictEqual(report.ok, true, JSON.stringify(report.broken))
      assert.strictEqual(report.unsealed, 0)
      // The first stops (as a node does): the second does not seal until its lease has run out (10 s).
      await runtime.runPromise(Fiber.interrupt(firstRun))
      await secret("LEASED_WAITING")
      await new Promise((resolve) => setTimeout(resolve, 1_000))
      assert.isBelow((await verify()).events, await rows(), "the second sealer took a lease that had not run out")
    } finally {
      await runtime.runPromise(Fiber.interrupt(firstRun))
      await runtime.runPromise(Fiber.interrupt(secondRun))
    }
  })

  /** Edits one column of the target event, expects verify to name it, undoes the edit, expects the log whole again. */
  const tamper = async (column: string, edit: string) => {
    const [before] = await sql((s) => s.unsafe<{ value: string }>(`SELECT ${column}::text AS value FROM cairn_events WHERE global_position = ${target.position}`))
    assert.isDefined(before, `the target row has ${column}`)
    await sql((s) => s.unsafe(`UPDATE cairn_events SET ${column} = ${edit} WHERE global_position = ${target.position}`))
    const broken = await verify()
    await sql((s) => s.unsafe(`UPDATE cairn_events SET ${column} = $1::text::${columnType[column]} WHERE global_position = ${target.position}`, [before!.value]))
    return broken
  }
  const columnType: Record<string, string> = {
    transaction_id: "xid8", stream_id: "text", version: "int8", event_id: "uuid", type: "text",
    data: "jsonb", metadata: "jsonb", recorded_at: "timestamptz"
  }

  for (const [column, edit] of [
    ["data", `jsonb_set(data, '{name}', '"RENAMED_KEY"')`],
    ["metadata", `jsonb_set(metadata, '{actor}', '"mallory"')`],
    ["type", `'SecretDeleted'`],
    ["event_id", `gen_random_uuid()`],
    ["recorded_at", `recorded_at + interval '1 second'`],
    ["version", `version + 1000`],
    ["stream_id", `stream_id || '-forged'`],
    ["transaction_id", `(transaction_id::text::int8 - 1)::text::xid8`]
  ] as const) {
    it(`finds ${column} edited, names the event, and verifies again once it is undone`, async () => {
      const report = await tamper(column, edit)
      assert.strictEqual(report.ok, false, `an edited ${column} went unnoticed`)
      assert.isNotNull(report.broken)
      // The edited row is the one named (or, when the edit moved it in the log, the row now in its place).
      if (column !== "transaction_id") assert.strictEqual(report.broken!.position?.split(":")[1], target.position.toString(), report.broken!.problem)
      const whole = await verify()
      assert.strictEqual(whole.ok, true, JSON.stringify(whole.broken))
    })
  }

  it("finds global_position edited (an identity column an attacker must unlock first)", async () => {
    await sql((s) => s`ALTER TABLE cairn_events ALTER COLUMN global_position SET GENERATED BY DEFAULT`)
    const moved = target.position + 1_000_000n
    try {
      await sql((s) => s`UPDATE cairn_events SET global_position = ${moved.toString()}::int8 WHERE global_position = ${target.position.toString()}::int8`)
      const report = await verify()
      assert.strictEqual(report.ok, false)
      assert.match(report.broken!.problem, /no event was sealed at this position/)
      assert.strictEqual(report.broken!.position?.split(":")[1], moved.toString())
    } finally {
      await sql((s) => s`UPDATE cairn_events SET global_position = ${target.position.toString()}::int8 WHERE global_position = ${moved.toString()}::int8`)
      await sql((s) => s`ALTER TABLE cairn_events ALTER COLUMN global_position SET GENERATED ALWAYS`)
    }
    assert.strictEqual((await verify()).ok, true)
  })

  it("finds a row deleted, and a row inserted among sealed ones", async () => {
    const [{ row }] = await sql((s) => s<{ row: string }>`SELECT row_to_json(e)::text AS row FROM cairn_events e WHERE global_position = ${target.position.toString()}::int8`) as Array<{ row: string }>
    await sql((s) => s`DELETE FROM cairn_events WHERE global_position = ${target.position.toString()}::int8`)
    const deleted = await verify()
    assert.strictEqual(deleted.ok, false)
    assert.match(deleted.broken!.problem, /deleted|missing/)
    await sql((s) => s`INSERT INTO cairn_events (global_position, transaction_id, stream_id, version, event_id, type, data, metadata, recorded_at)
      OVERRIDING SYSTEM VALUE SELECT * FROM json_populate_record(NULL::cairn_events, ${row}::json)`)
    assert.strictEqual((await verify()).ok, true)

    // A forged event slipped in among the sealed ones: a free position, an early transaction id (first in log order).
    const [{ free }] = await sql((s) => s<{ free: string }>`SELECT (max(global_position) + 1000)::text AS free FROM cairn_events`) as Array<{ free: string }>
    await sql((s) => s`INSERT INTO cairn_events (global_position, transaction_id, stream_id, version, event_id, type, data)
      OVERRIDING SYSTEM VALUE VALUES (${free}::int8, '1'::xid8, 'forged-1', 1, gen_random_uuid(), 'Forged', '{}')`)
    const forged = await verify()
    assert.strictEqual(forged.ok, false)
    assert.strictEqual(forged.broken!.stream, "forged-1")
    assert.match(forged.broken!.problem, /no event was sealed at this position/)
    await sql((s) => s`DELETE FROM cairn_events WHERE stream_id = 'forged-1'`)
    assert.strictEqual((await verify()).ok, true)
  })

  it("reads many blocks ten to a statement, and names the block an event was deleted from, also in the middle of a read", async () => {
    // 12 blocks of 1,000 events (two reads of ten blocks), the workspace's, in appends across blocks' edges.
    for (let batch = 0; batch < 12; batch++) {
      await runtime.runPromise(EventStore.use((store) =>
        store.append([{ stream: `audit-many-${batch}`, expected: ExpectedVersion.NoStream, events: Array.from({ length: 1000 }, (_, n) => ({ type: "Counted", data: { workspaceId, batch, n } })) }])))
    }
    await seal()
    const whole = await verify()
    assert.strictEqual(whole.ok, true, JSON.stringify(whole.broken))
    assert.isAtLeast(whole.blocks, 12)
    // A block fifth in its read: the blocks before it in the same statement are intact, the event is gone from it.
    const [{ block, position }] = await sql((s) => s<{ block: string; position: string }>`
      SELECT block::text, positions[500]::text AS position FROM cairn_log_seals WHERE count = 1000 ORDER BY block DESC OFFSET 6 LIMIT 1`) as Array<{ block: string; position: string }>
    const [{ row }] = await sql((s) => s<{ row: string }>`SELECT row_to_json(e)::text AS row FROM cairn_events e WHERE global_position = ${position}::int8`) as Array<{ row: string }>
    await sql((s) => s`DELETE FROM cairn_events WHERE global_position = ${position}::int8`)
    const deleted = await verify()
    assert.strictEqual(deleted.ok, false)
    assert.strictEqual(deleted.broken!.block, Number(block), JSON.stringify(deleted.broken))
    assert.match(deleted.broken!.problem, /deleted|moved/)
    await sql((s) => s`INSERT INTO cairn_events (global_position, transaction_id, stream_id, version, event_id, type, data, metadata, recorded_at)
      OVERRIDING SYSTEM VALUE SELECT * FROM json_populate_record(NULL::cairn_events, ${row}::json)`)
    assert.strictEqual((await verify()).ok, true)
  })

  it("finds the seals themselves edited: a chained-from hash, a position, a leaf, a root, a signature, a block removed", async () => {
    const edits: ReadonlyArray<readonly [string, RegExp]> = [
      [`UPDATE cairn_log_seals SET prevs = overlay(prevs placing '\\xab'::bytea from 1 for 1) WHERE block = 1`, /chain from/],
      [`UPDATE cairn_log_seals SET positions[1] = positions[1] + 100000 WHERE block = 1`, /no event was sealed at this position/],
      [`UPDATE cairn_log_seals SET leaves = overlay(leaves placing '\\xff'::bytea from 1 for 1) WHERE block = 1`, /leaves|root/],
      [`UPDATE cairn_log_seals SET root = decode(repeat('cd', 32), 'hex') WHERE block = 1`, /hash|signature|root/],
      [`UPDATE cairn_log_seals SET signature = signature || 'x' WHERE block = 1`, /signature/],
      [`DELETE FROM cairn_log_seals WHERE block = 1`, /block 1 is missing/]
    ]
    for (const [edit, problem] of edits) {
      const saved = await sql((s) => s<{ row: string }>`SELECT row_to_json(t)::text AS row FROM cairn_log_seals t`)
      await sql((s) => s.unsafe(edit))
      const report = await verify()
      assert.strictEqual(report.ok, false, `${edit} went unnoticed`)
      assert.match(report.broken!.problem, problem, edit)
      await sql((s) => s`DELETE FROM cairn_log_seals`)
      await sql((s) => s`INSERT INTO cairn_log_seals SELECT * FROM json_populate_recordset(NULL::cairn_log_seals, ${`[${saved.map((r) => r.row).join(",")}]`}::json)`)
      assert.strictEqual((await verify()).ok, true, `undoing ${edit}`)
    }
  })
})

describe("export", () => {
  const exportOf = async (token: string, query = "") => {
    const response = await web.handler(new Request(`http://cairn/v0/audit/export${query}`, { headers: { authorization: `Bearer ${token}` } }))
    assert.strictEqual(response.status, 200, await response.clone().text())
    assert.strictEqual(response.headers.get("content-type"), "application/vnd.ipld.car")
    return new Uint8Array(await response.arrayBuffer())
  }
  const blocksOf = async (car: Uint8Array) => {
    const reader = await CarReader.fromBytes(car)
    const blocks: Array<any> = []
    for await (const block of reader.blocks()) blocks.push(JSON.parse(new TextDecoder().decode(block.bytes)))
    return { roots: await reader.getRoots(), blocks }
  }
  const runVerifier = (file: string, jwks: string) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
      execFile(process.execPath, [verifier, file, "--jwks", jwks], (error, stdout, stderr) =>
        resolve({ code: error === null ? 0 : (error as { code?: number }).code ?? 1, stdout, stderr })))

  it("streams the workspace's sealed events with their proofs, no other workspace's, and never a secret's ciphertext", async () => {
    await seal()
    const car = await exportOf(owner)
    const { roots, blocks } = await blocksOf(car)
    assert.strictEqual(roots.length, 1)
    assert.strictEqual(blocks[0].format, "cairn-audit-export/1")
    assert.strictEqual(blocks[0].workspaceId, workspaceId)
    const seals = blocks.filter((b) => b.kind === "seal")
    const events = seals.flatMap((s) => s.events)
    assert.isAbove(events.length, 3)
    assert.deepStrictEqual(blocks[blocks.length - 1], { kind: "end", events: events.length, seals: seals.length, last: events[events.length - 1].position })
    assert.notInclude(events.map((e: any) => e.stream).join(" "), "someone-else")
    const secret = events.find((e: any) => e.type === "SecretCreated")
    assert.strictEqual(secret.redacted, true)
    assert.match(secret.dataHash, /^[0-9a-f]{64}$/)
    assert.notProperty(secret.data, "sealed")
    assert.notInclude(new TextDecoder().decode(car), "sk-very-secret-value")
    for (const seal of seals) assert.strictEqual(seal.leaves.length, seal.header.count)
  })

  it("is checked offline by the verifier program against the installation's JWKS, which refuses an edited export", async () => {
    const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "cairn-audit-"))
    const jwks = Path.join(dir, "jwks.json")
    const keys = await web.handler(new Request("http://cairn/.well-known/jwks.json"))
    Fs.writeFileSync(jwks, await keys.text())
    const file = Path.join(dir, "audit.car")
    const car = await exportOf(owner)
    Fs.writeFileSync(file, car)
    const good = await runVerifier(file, jwks)
    assert.strictEqual(good.code, 0, good.stdout + good.stderr)

    // The agent's name changed in the file, and its block's CID made to match again: the event's hash no longer does.
    const { CarWriter } = await import("@ipld/car")
    const { CID } = await import("multiformats/cid")
    const { sha256 } = await import("multiformats/hashes/sha2")
    const { roots, blocks } = await blocksOf(car)
    const seal = blocks.find((b) => b.kind === "seal" && b.events.some((e: any) => e.type === "AgentCreated"))
    const created = seal.events.find((e: any) => e.type === "AgentCreated")
    created.data = { ...created.data, name: "renamed" }
    const { writer, out } = CarWriter.create(roots)
    const chunks: Array<Uint8Array> = []
    const collected = (async () => { for await (const chunk of out) chunks.push(chunk) })()
    for (const block of blocks) {
      const bytes = new TextEncoder().encode(JSON.stringify(block))
      await writer.put({ cid: CID.createV1(0x0200, await sha256.digest(bytes)), bytes })
    }
    await writer.close()
    await collected
    const edited = Path.join(dir, "edited.car")
    Fs.writeFileSync(edited, Buffer.concat(chunks))
    const refused = await runVerifier(edited, jwks)
    assert.strictEqual(refused.code, 1, refused.stdout + refused.stderr)
    assert.match(refused.stdout + refused.stderr, /FAILED/)
  })

  it("copies each event's JSON as the database keeps it, which the checker reads as the values the sealer hashed", async () => {
    // The export writes the database's own JSON text of each event (not the values parsed and written again): text
    // with escapes, characters beyond ASCII, numbers jsonb writes in its own notation, a stream and type that need
    // escaping, a "sealed" that is a value rather than a key, and metadata.
    const data = {
      workspaceId,
      text: "quote \" backslash \\ newline \n tab \t é 😀 \u2028 </script>",
      small: 1.5e-7,
      big: 1e300,
      negative: -0.5,
      integer: 9007199254740991,
      nested: { list: [1, "two", null, true, { deep: [] }], empty: {} },
      kind: "sealed"
    }
    const metadata = { correlationId: "c-é\"1", causationId: "cause-😀" }
    const stream = `audit-odd-"stream"-é-${Date.now()}`
    await runtime.runPromise(EventStore.use((store) =>
      store.append([{ stream, expected: ExpectedVersion.NoStream, events: [{ type: "Odd\"Type", data, metadata }] }])))
    await seal()
    const car = await exportOf(owner)
    const events = (await blocksOf(car)).blocks.filter((b) => b.kind === "seal").flatMap((s) => s.events)
    const odd = events.find((e: any) => e.stream === stream)
    assert.isDefined(odd, "the appended event is in the export")
    assert.deepStrictEqual(odd.data, data)
    assert.deepInclude(odd.metadata, metadata)
    assert.strictEqual(odd.type, "Odd\"Type")
    assert.notProperty(odd, "redacted")
    assert.match(odd.recordedAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "cairn-audit-"))
    Fs.writeFileSync(Path.join(dir, "jwks.json"), await (await web.handler(new Request("http://cairn/.well-known/jwks.json"))).text())
    Fs.writeFileSync(Path.join(dir, "audit.car"), car)
    const checked = await runVerifier(Path.join(dir, "audit.car"), Path.join(dir, "jwks.json"))
    assert.strictEqual(checked.code, 0, checked.stdout + checked.stderr)
  })

  it("starts after `since` (a position or a time), and refuses one that is neither", async () => {
    const all = (await blocksOf(await exportOf(owner))).blocks.filter((b) => b.kind === "seal").flatMap((s) => s.events)
    const middle = all[Math.floor(all.length / 2)]
    const later = (await blocksOf(await exportOf(owner, `?since=${middle.position}`))).blocks.filter((b) => b.kind === "seal").flatMap((s) => s.events)
    assert.deepStrictEqual(later.map((e: any) => e.position), all.slice(all.indexOf(middle) + 1).map((e: any) => e.position))
    const future = (await blocksOf(await exportOf(owner, `?since=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`))).blocks
    assert.deepStrictEqual(future.slice(1), [{ kind: "end", events: 0, seals: 0, last: null }])
    ApiKit.expectError(await request("GET", "/v0/audit/export?since=yesterday", owner), 400, /^Validation failed: since must be/)
  })
})
