/**
 * The auth adapters, which keep their keys and tokens in 0600 files or configuration (`node:` modules, jose):
 * `JoseTokenSigner` (ES256 keys, JWKS, platform tokens), `HashedAdminToken`, `HmacGatewayTokens`, the MasterKeys
 * adapters (`FileMasterKeys`, `ConfigMasterKeys`, `NoMasterKeys`, picked by `MasterKeysConfig`) and `SecretFile`,
 * the files they share.
 */
export * as ConfigMasterKeys from "./ConfigMasterKeys.ts"
export * as FileMasterKeys from "./FileMasterKeys.ts"
export * as HashedAdminToken from "./HashedAdminToken.ts"
export * as HmacGatewayTokens from "./HmacGatewayTokens.ts"
export * as JoseTokenSigner from "./JoseTokenSigner.ts"
export * as MasterKeysConfig from "./MasterKeysConfig.ts"
export * as NoMasterKeys from "./NoMasterKeys.ts"
export * as SecretFile from "./SecretFile.ts"
