/**
 * Whether a bearer token says it is a platform token (scope `platform`), read without verifying it, to choose how to
 * verify it: an agent's route then checks it as a platform token (TokenSigner.verifyPlatformToken), every other
 * token as an API key. Saying so earns nothing by itself: the verification that follows decides.
 */
export const claimsPlatform = (token: string): boolean => {
  const payload = token.split(".")[1]
  if (payload === undefined || payload.length > 4096) return false
  try {
    const claims = JSON.parse(atob(payload.replace(/-/g, "+").replace(/_/g, "/"))) as { readonly scp?: unknown }
    return Array.isArray(claims.scp) && claims.scp.includes("platform")
  } catch {
    return false
  }
}
