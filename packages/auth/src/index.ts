/**
 * The TokenSigner port and its errors, the jose adapter, the admin token, the MasterKeys port and its adapters, and
 * the secret files they keep.
 */
export * as AdminToken from "./AdminToken.ts"
export * as ConfigMasterKeys from "./ConfigMasterKeys.ts"
export * as FileMasterKeys from "./FileMasterKeys.ts"
export * as GatewayTokens from "./GatewayTokens.ts"
export * as JoseTokenSigner from "./JoseTokenSigner.ts"
export * from "./MasterKeys.ts"
export * as MasterKeysConfig from "./MasterKeysConfig.ts"
export * as NoMasterKeys from "./NoMasterKeys.ts"
export * as SecretFile from "./SecretFile.ts"
export * from "./TokenSigner.ts"
export * as VerifiedTokens from "./VerifiedTokens.ts"
