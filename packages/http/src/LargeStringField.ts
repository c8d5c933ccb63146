/**
 * A JSON body that is mostly one long string (an upload's `contentBase64`: 14 MB for a 10 MiB file), parsed without
 * turning the whole body into a string: the field's value is found in the bytes and cut out, the rest (small) goes
 * through `JSON.parse`, and the value is put back as a one-byte string. Decoding 14 MB as UTF-8 and parsing it cost
 * about 150 ms; this about 20 ms. Only a value with no escape in it is taken this way, and only when the rest parses
 * to an object whose field is the emptied value (so the bytes found were that key at the top level); anything else
 * (an escaped key, a nested or repeated one, no such field) is left to the full parse: `undefined`.
 */
const encoder = new TextEncoder()
const quote = 0x22
const backslash = 0x5c
const colon = 0x3a
const isSpace = (byte: number | undefined) => byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d

/** Where the value of the first `"<field>": "` in `raw` starts and ends (the bytes between its quotes). */
const valueBounds = (raw: Uint8Array, field: string): { readonly start: number; readonly end: number } | undefined => {
  const key = encoder.encode(JSON.stringify(field))
  for (let at = raw.indexOf(quote); at !== -1; at = raw.indexOf(quote, at + 1)) {
    let matches = true
    for (let i = 1; i < key.length && matches; i++) matches = raw[at + i] === key[i]
    if (!matches) continue
    let next = at + key.length
    while (isSpace(raw[next])) next++
    if (raw[next] !== colon) continue
    next++
    while (isSpace(raw[next])) next++
    if (raw[next] !== quote) return undefined
    const start = next + 1
    const end = raw.indexOf(quote, start)
    if (end === -1) return undefined
    const escape = raw.indexOf(backslash, start)
    if (escape !== -1 && escape < end) return undefined
    return { start, end }
  }
  return undefined
}

export const parseWithLargeString = (raw: Uint8Array, field: string): unknown => {
  const bounds = valueBounds(raw, field)
  if (bounds === undefined) return undefined
  const rest = new Uint8Array(raw.byteLength - (bounds.end - bounds.start))
  rest.set(raw.subarray(0, bounds.start))
  rest.set(raw.subarray(bounds.end), bounds.start)
  let value: unknown
  try {
    value = JSON.parse(new TextDecoder().decode(rest))
  } catch {
    return undefined
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined
  const record = value as Record<string, unknown>
  if (record[field] !== "") return undefined
  // Latin-1 keeps one byte per character; a non-ASCII byte cannot be valid in the value's own format (base64) and
  // is refused there, as a character outside its alphabet.
  record[field] = new TextDecoder("latin1").decode(raw.subarray(bounds.start, bounds.end))
  return record
}
