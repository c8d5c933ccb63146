/**
 * A QR code read back from its PNG into text: the modules of codes of several sizes and scales, checked against the
 * `qrcode` library's own encoding of what they hold; an image that holds no code as drawn is undefined.
 */
import { assert, describe, it } from "@effect/vitest"
import { PNG } from "pngjs"
import QRCode from "qrcode"
import * as QrText from "../src/channels/QrText.ts"

const encoded = (content: string) => {
  const { modules } = QRCode.create(content, {})
  return Array.from({ length: modules.size }, (_, y) => Array.from({ length: modules.size }, (_, x) => modules.get(y, x) === 1))
}

describe("QrText", () => {
  it("reads every module of codes of several sizes, scales and margins", async () => {
    const contents = ["2@short", "2@" + "x".repeat(120) + ",key1,key2,key3", "https://example.com/" + "a".repeat(300)]
    for (const content of contents) {
      for (const [scale, margin] of [[1, 0], [6, 4], [3, 2]] as const) {
        const dataUrl = await QRCode.toDataURL(content, { scale, margin })
        assert.deepStrictEqual(QrText.modulesOf(dataUrl), encoded(content), `${content.length} characters, scale ${scale}, margin ${margin}`)
      }
    }
  })

  it("draws two module rows a line in half blocks, with a quiet zone of two modules", async () => {
    const modules = encoded("2@short")
    const text = QrText.qrText(await QRCode.toDataURL("2@short", { scale: 6, margin: 4 }))!
    const lines = text.split("\n")
    const width = modules.length + 4
    assert.strictEqual(lines.length, Math.ceil(width / 2))
    for (const line of lines) assert.strictEqual([...line].length, width)
    assert.match(lines[0]!, /^ +$/)
    // The top-left finder's top edge: module row 0 is line 1's upper half (after the quiet zone's two rows).
    assert.strictEqual([...lines[1]!].slice(2, 9).join(""), modules[0]!.slice(0, 7).map((dark, x) => dark && modules[1]![x] ? "█" : dark ? "▀" : modules[1]![x] ? "▄" : " ").join(""))
  })

  it("is undefined for an image that holds no code as drawn", () => {
    const blank = new PNG({ width: 30, height: 30 })
    blank.data.fill(255)
    const square = new PNG({ width: 30, height: 30 })
    square.data.fill(255)
    for (let y = 5; y < 25; y++) for (let x = 5; x < 25; x++) square.data.fill(0, (y * 30 + x) * 4, (y * 30 + x) * 4 + 3)
    for (const png of [blank, square]) assert.isUndefined(QrText.qrText(`data:image/png;base64,${PNG.sync.write(png).toString("base64")}`))
    assert.isUndefined(QrText.qrText("data:image/png;base64,bm90IGEgcG5n"))
    assert.isUndefined(QrText.qrText("data:text/plain,hello"))
  })
})
