/**
 * What the adapters' tests share: signing with real viem accounts, a pinned signature of Pinata's documented
 * example, and malformed inputs.
 */
import { domain, primaryType, type SignedContent, types } from "@cairn/signatures"
import type { Address, Hex } from "viem"
import { privateKeyToAccount } from "viem/accounts"

/** Signs `{address, cid, date}` as a wallet following Pinata's docs would, with the key's own address. */
export const sign = async (privateKey: Hex, cid: string, date: string): Promise<SignedContent> => {
  const account = privateKeyToAccount(privateKey)
  const message = { address: account.address, cid, date }
  return { ...message, signature: await account.signTypedData({ domain, types, primaryType, message }) }
}

/** The first development key of Anvil and Hardhat: public, so fit for a fixed vector and worthless elsewhere. */
export const vectorKey: Hex = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80"

/**
 * The CID and date of Pinata's documented example, signed with `vectorKey`. Signing is deterministic (RFC 6979), so
 * any change to the domain, the types or the message shape changes this signature.
 */
export const vector: SignedContent & { readonly address: Address; readonly signature: Hex } = {
  address: "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266",
  cid: "bafkreih5aznjvttude6c3wbvqeebb6rlx5wkbzyppv7garjiubll2ceym4",
  date: "2024-07-29T18:29:47.355Z",
  signature:
    "0x78efaf3336162ad4bd74f3bbb83ee3a20df10646576ce232c683834be0a3e31372e649003012528d4ee2f2ae21120a4344932ec25cb7a9ca5c96108a32c48a851b"
}

/** Flips the bits of `mask` in the signature's byte at `index`. */
export const tamper = (signature: string, index: number, mask: number): string => {
  const at = 2 + index * 2
  const byte = (Number.parseInt(signature.slice(at, at + 2), 16) ^ mask).toString(16).padStart(2, "0")
  return signature.slice(0, at) + byte + signature.slice(at + 2)
}

type Case = { readonly name: string; readonly content: SignedContent }

/** The vector with a field that is not even bytes or not an address: no wallet of any kind can have signed it. */
export const malformed: ReadonlyArray<Case> = [
  { name: "a signature with an odd number of hex digits", content: { ...vector, signature: vector.signature.slice(0, -1) } },
  { name: "a signature that is not hex", content: { ...vector, signature: `0x${"zz".repeat(65)}` } },
  { name: "a signature without its 0x prefix", content: { ...vector, signature: vector.signature.slice(2) } },
  { name: "an empty signature string", content: { ...vector, signature: "" } },
  { name: "an address one byte short", content: { ...vector, address: vector.address.slice(0, -2) } },
  { name: "an address that is not hex", content: { ...vector, address: `0x${"g".repeat(40)}` } },
  { name: "an address without its 0x prefix", content: { ...vector, address: vector.address.slice(2) } },
  // The same bytes as the signer's address, but one letter's case breaks its EIP-55 checksum.
  { name: "an address with a broken checksum", content: { ...vector, address: `0xF${vector.address.slice(3)}` } },
  { name: "an empty address", content: { ...vector, address: "" } }
]

/**
 * The vector with a signature of whole bytes but not the 65 an ECDSA signature takes. No key made it; a contract
 * wallet defines its own signature format, so only the chain can say whether one of these is valid for it.
 */
export const notFromAKey: ReadonlyArray<Case> = [
  { name: "a signature one byte short", content: { ...vector, signature: vector.signature.slice(0, -2) } },
  { name: "a signature one byte long", content: { ...vector, signature: `${vector.signature}00` } },
  { name: "a signature of no bytes", content: { ...vector, signature: "0x" } }
]
