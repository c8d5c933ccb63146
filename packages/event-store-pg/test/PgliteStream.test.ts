import { PGlite } from "@electric-sql/pglite"
import { assert, describe, it } from "@effect/vitest"
import { once } from "node:events"
import { makePgliteStream } from "../src/PgliteStream.ts"

const int32 = (n: number) => {
  const b = Buffer.alloc(4)
  b.writeInt32BE(n)
  return b
}
const startup = () => {
  const body = Buffer.concat([int32(196608), Buffer.from("user\0postgres\0database\0postgres\0\0")])
  return Buffer.concat([int32(body.length + 4), body])
}
/** A simple-protocol query message. */
const query = (text: string) => {
  const body = Buffer.from(`${text}\0`)
  return Buffer.concat([Buffer.from("Q"), int32(body.length + 4), body])
}
const terminate = Buffer.concat([Buffer.from("X"), int32(4)])

/** The CommandComplete tags in a stream of backend messages. */
const completions = (output: Buffer) => {
  const tags: Array<string> = []
  for (let at = 0; at + 5 <= output.length;) {
    const length = 1 + output.readInt32BE(at + 1)
    if (output[at] === 0x43) tags.push(output.subarray(at + 5, at + length - 1).toString())
    at += length
  }
  return tags
}

describe("PgliteStream", () => {
  it("runs every message of a write, and a message split across writes, in order, then ends on Terminate", async () => {
    const db = await PGlite.create()
    try {
      const stream = makePgliteStream(db)()
      const chunks: Array<Buffer> = []
      stream.on("data", (chunk: Buffer) => chunks.push(chunk))
      const ended = once(stream, "end")
      stream.write(startup())
      const queries = Buffer.concat([
        query("CREATE TABLE t (n int)"),
        query("INSERT INTO t VALUES (1), (2)"),
        query("SELECT n FROM t")
      ])
      // Two whole messages and half of the third in one write, the rest with the Terminate in the next.
      const cut = queries.length - 7
      stream.write(queries.subarray(0, cut))
      stream.write(Buffer.concat([queries.subarray(cut), terminate]))
      await ended
      assert.deepStrictEqual(completions(Buffer.concat(chunks)).filter((tag) => tag !== ""), [
        "CREATE TABLE",
        "INSERT 0 2",
        "SELECT 2"
      ])
    } finally {
      await db.close()
    }
  })
})
