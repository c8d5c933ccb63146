/**
 * The auth ports and what they share, runnable on Node, Bun and Deno: `TokenSigner` (API keys, platform tokens and signed URLs' grants)
 * with its errors, `AdminToken`, `GatewayTokens`, `MasterKeys` with its errors, and `VerifiedTokens`, the memo of
 * verified API keys. The adapters (jose, the key files, the HMAC and hashed tokens) are `@cairn/auth/node`.
 */
export * as AdminToken from "./AdminToken.ts"
export * as GatewayTokens from "./GatewayTokens.ts"
export * from "./MasterKeys.ts"
export * from "./TokenSigner.ts"
export * as VerifiedTokens from "./VerifiedTokens.ts"
export * as PlatformToken from "./PlatformToken.ts"
