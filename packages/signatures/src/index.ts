/** Wallet signatures of CIDs: the SignatureVerifier port with its EIP-712 typed data and errors, and its adapters. */
export * as Eip1271SignatureVerifier from "./Eip1271SignatureVerifier.ts"
export * as EoaSignatureVerifier from "./EoaSignatureVerifier.ts"
export * from "./SignatureVerifier.ts"
