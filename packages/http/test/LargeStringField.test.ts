import { assert, describe, it } from "@effect/vitest"
import { parseWithLargeString } from "../src/LargeStringField.ts"

const bytes = (text: string) => new TextEncoder().encode(text)
const parse = (text: string) => parseWithLargeString(bytes(text), "contentBase64")

describe("a JSON body with one large string field", () => {
  it("takes the field from the bytes and parses the rest, whatever the spacing and order", () => {
    assert.deepStrictEqual(parse(`{"filename":"a.txt","contentBase64":"aGVsbG8="}`), { filename: "a.txt", contentBase64: "aGVsbG8=" })
    assert.deepStrictEqual(parse(`{ "contentBase64" :\n "aGk=" , "filename" : "b\\"c.txt" }`), { contentBase64: "aGk=", filename: "b\"c.txt" })
    assert.deepStrictEqual(parse(`{"contentBase64":""}`), { contentBase64: "" })
  })

  it("leaves to the full parse what it cannot take safely", () => {
    // An escape in the value, an escaped key, a repeated key (JSON.parse takes the last), a nested one, none at all.
    assert.isUndefined(parse(`{"contentBase64":"aGk\\u003d"}`))
    assert.isUndefined(parse(`{"content\\u0042ase64":"aGk="}`))
    assert.isUndefined(parse(`{"contentBase64":"aGk=","contentBase64":"b2s="}`))
    assert.isUndefined(parse(`{"inner":{"contentBase64":"aGk="}}`))
    assert.isUndefined(parse(`{"filename":"x"}`))
    // A key inside a string value is escaped there, so it is never taken for the key.
    assert.isUndefined(parse(`{"filename":"\\"contentBase64\\":\\"aGk=\\""}`))
  })

  it("leaves bodies that are not JSON objects to the full parse, which refuses them", () => {
    assert.isUndefined(parse(`{"contentBase64":"aGk="`))
    assert.isUndefined(parse(`["contentBase64", "x"]`))
    assert.isUndefined(parse(`{"contentBase64":"aGk=",}`))
    assert.isUndefined(parse(`{"contentBase64": 5}`))
  })
})
