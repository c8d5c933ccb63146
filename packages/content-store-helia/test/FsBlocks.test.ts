import { describe, expect, it } from "@effect/vitest"
import { FsBlockstore } from "blockstore-fs"
import { CID } from "multiformats/cid"
import * as raw from "multiformats/codecs/raw"
import { sha256 } from "multiformats/hashes/sha2"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { FsBlocks } from "../src/FsBlocks.ts"

const block = async (text: string) => {
  const bytes = new TextEncoder().encode(text)
  return { bytes, cid: CID.createV1(raw.code, await sha256.digest(bytes)) }
}

const files = async (directory: string): Promise<Array<string>> =>
  (await fs.readdir(directory, { recursive: true, withFileTypes: true })).filter((entry) => entry.isFile()).map((entry) => entry.name)

/** A store in a temporary directory of its own, removed afterwards. */
const withStore = async (test: (store: FsBlocks, location: string) => Promise<void>) => {
  const location = await fs.mkdtemp(path.join(os.tmpdir(), "cairn-fsblocks-"))
  try {
    const store = new FsBlocks(location)
    await store.open()
    await test(store, location)
  } finally {
    await fs.rm(location, { recursive: true, force: true })
  }
}

describe("FsBlocks", () => {
  it("writes blocks where blockstore-fs reads them, making shard directories on demand, and leaves no temporary file", () =>
    withStore(async (store, location) => {
      const one = await block("one")
      const two = await block("two")
      await store.put(one.cid, one.bytes)
      await store.put(one.cid, one.bytes) // a block written twice stays whole
      await Promise.all([store.put(two.cid, two.bytes), store.put(two.cid, [two.bytes.subarray(0, 1), two.bytes.subarray(1)])])
      const reader = new FsBlockstore(location)
      for (const { cid, bytes } of [one, two]) {
        const pieces: Array<Uint8Array> = []
        for await (const piece of reader.get(cid)) pieces.push(piece)
        expect(Buffer.concat(pieces)).toEqual(Buffer.from(bytes))
      }
      expect((await files(location)).filter((name) => name.endsWith(".tmp"))).toEqual([])
      expect(await files(location)).toHaveLength(2)
    }))

  it("writes a block given in pieces (more than one writev takes, some empty) whole, where blockstore-fs reads it", () =>
    withStore(async (store, location) => {
      const { bytes, cid } = await block("piece by piece ".repeat(200))
      const pieces = Array.from(bytes, (_, i) => i % 7 === 0 ? [new Uint8Array(), bytes.subarray(i, i + 1)] : [bytes.subarray(i, i + 1)]).flat()
      await store.putPieces(cid, pieces)
      await store.putPieces(cid, [bytes]) // written again: still whole
      const read: Array<Uint8Array> = []
      for await (const piece of new FsBlockstore(location).get(cid)) read.push(piece)
      expect(Buffer.concat(read)).toEqual(Buffer.from(bytes))
      expect(await files(location)).toHaveLength(1)
    }))

  it("adopts a staged file by rename, and leaves a block already stored as it is (the staged file to its owner)", () =>
    withStore(async (store, location) => {
      const one = await block("one")
      const staged = path.join(location, "staged-1")
      await fs.writeFile(staged, one.bytes)
      await store.adopt(one.cid, staged) // its shard directory made on demand
      await expect(fs.access(staged)).rejects.toThrow()
      const [stored] = (await fs.readdir(location, { recursive: true })).filter((name) => name.endsWith(".data"))
      const before = await fs.stat(path.join(location, stored!))
      const again = path.join(location, "staged-2")
      await fs.writeFile(again, one.bytes)
      await store.adopt(one.cid, again)
      // Not renamed over: the stored file is the same one (replacing it would free its disk blocks).
      expect((await fs.stat(path.join(location, stored!))).ino).toBe(before.ino)
      expect(await fs.readFile(again)).toEqual(Buffer.from(one.bytes))
      const read: Array<Uint8Array> = []
      for await (const piece of new FsBlockstore(location).get(one.cid)) read.push(piece)
      expect(Buffer.concat(read)).toEqual(Buffer.from(one.bytes))
    }))
})
