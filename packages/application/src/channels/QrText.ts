/**
 * A QR code as text, for a terminal, a log or a chat that shows no image: read back from the PNG the engine renders
 * (OpenClaw draws each module as a square of `scale` pixels inside a light quiet zone), one column per module and two
 * module rows per line, in half blocks (`█` `▀` `▄`, and a space for two light modules), with a quiet zone of two
 * modules. Dark modules are the blocks: it reads as is on a light background.
 */
import { PNG } from "pngjs"

const prefix = "data:image/png;base64,"
const quietZone = 2

/** A QR code's modules, row by row (true is dark), or undefined when the image holds no QR code as drawn. */
export const modulesOf = (dataUrl: string): ReadonlyArray<ReadonlyArray<boolean>> | undefined => {
  if (!dataUrl.startsWith(prefix)) return undefined
  let png: PNG
  try {
    png = PNG.sync.read(Buffer.from(dataUrl.slice(prefix.length), "base64"))
  } catch {
    return undefined
  }
  const { width, height, data } = png
  const dark = (x: number, y: number) => {
    const at = (y * width + x) * 4
    return data[at + 3]! >= 128 && data[at]! * 0.299 + data[at + 1]! * 0.587 + data[at + 2]! * 0.114 < 128
  }
  let minX = width, minY = height, maxX = -1, maxY = -1
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      if (!dark(x, y)) continue
      if (x < minX) minX = x
      if (x > maxX) maxX = x
      if (y < minY) minY = y
      if (y > maxY) maxY = y
    }
  }
  if (maxX < 0) return undefined
  // The top-left finder pattern's top edge is 7 dark modules: its run gives the module's size in pixels.
  let run = 0
  while (minX + run <= maxX && dark(minX + run, minY)) run++
  const scale = run / 7
  const size = (maxX - minX + 1) / scale
  if (!Number.isInteger(scale) || !Number.isInteger(size) || size < 21 || (size - 17) % 4 !== 0 || maxY - minY + 1 !== size * scale) {
    return undefined
  }
  const middle = Math.floor(scale / 2)
  return Array.from({ length: size }, (_, row) =>
    Array.from({ length: size }, (_, column) => dark(minX + column * scale + middle, minY + row * scale + middle)))
}

const halfBlock = (top: boolean, bottom: boolean) => top ? (bottom ? "█" : "▀") : bottom ? "▄" : " "

/** The QR code of a PNG data URL as lines of text (see above), or undefined when the image holds none. */
export const qrText = (dataUrl: string): string | undefined => {
  const modules = modulesOf(dataUrl)
  if (modules === undefined) return undefined
  const width = modules.length + 2 * quietZone
  const at = (row: number, column: number) => modules[row - quietZone]?.[column - quietZone] ?? false
  const lines: Array<string> = []
  for (let row = 0; row < width; row += 2) {
    let line = ""
    for (let column = 0; column < width; column++) line += halfBlock(at(row, column), at(row + 1, column))
    lines.push(line)
  }
  return lines.join("\n")
}
