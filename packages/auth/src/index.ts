/** The TokenSigner port and its errors, the jose adapter, the admin token and the secret files they keep. */
export * as AdminToken from "./AdminToken.ts"
export * as GatewayTokens from "./GatewayTokens.ts"
export * as JoseTokenSigner from "./JoseTokenSigner.ts"
export * as SecretFile from "./SecretFile.ts"
export * from "./TokenSigner.ts"
export * as VerifiedTokens from "./VerifiedTokens.ts"
