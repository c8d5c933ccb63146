/**
 * The TokenSigner port on `jose` with ES256. The active P-256 key signs; the active key and any rotated-out public
 * keys kept in `previous` verify, each found by its `kid` (the key's RFC 7638 thumbprint), so tokens issued before a
 * rotation keep working for as long as their key is kept. The key set comes from `CAIRN_SIGNING_KEY`, or from
 * `<dataDir>/signing-key.json`, generated at first start. Private keys are held in `Redacted` values and imported as
 * non-extractable CryptoKeys; only public parts ever leave this module, through `jwks`.
 */
import { Clock, Config, Effect, Layer, Option, Redacted, Schema } from "effect"
import * as jose from "jose"
import { join } from "node:path"
import * as SecretFile from "./SecretFile.ts"
import * as VerifiedTokens from "../VerifiedTokens.ts"
import { type ApiKeyClaims, type Grant, InvalidToken, type IssueOptions, type PlatformClaims, TokenSigner } from "../TokenSigner.ts"

const issuer = "cairn"
const algorithm = "ES256"
/** The JWS `typ` of a seal over a block of the log, so a seal never passes for a token nor a token for a seal. */
const sealType = "cairn-seal"

export const PublicJwk = Schema.Struct({
  kty: Schema.Literal("EC"),
  crv: Schema.Literal("P-256"),
  x: Schema.String,
  y: Schema.String
})
export type PublicJwk = typeof PublicJwk.Type

export const PrivateJwk = Schema.Struct({ ...PublicJwk.fields, d: Schema.String })
export type PrivateJwk = typeof PrivateJwk.Type

/** The signing key file: the key that signs, and the public keys of earlier ones that still verify. */
export const KeySet = Schema.Struct({
  active: PrivateJwk,
  previous: Schema.optionalKey(Schema.Array(PublicJwk))
})
export type KeySet = typeof KeySet.Type

// Configuration may hold a bare private JWK, or a whole key file when rotated-out keys must keep verifying.
const KeySetJson = Schema.fromJsonString(Schema.Union([KeySet, PrivateJwk]))

/** The key material could not be used; the message names where it came from, never what it holds. */
export class InvalidSigningKey extends Schema.TaggedError<InvalidSigningKey>()("InvalidSigningKey", {
  source: Schema.String
}) {
  override get message() {
    return `The signing key in ${this.source} is not a P-256 private JWK nor a key file { active, previous }`
  }
}

const ApiKeyPayload = Schema.Struct({
  sub: Schema.optionalKey(Schema.String),
  wid: Schema.NonEmptyString,
  jti: Schema.NonEmptyString,
  scp: Schema.Array(Schema.String)
})
const decodePayload = Schema.decodeUnknownEffect(ApiKeyPayload)

const PlatformPayload = Schema.Struct({
  sub: Schema.NonEmptyString,
  wid: Schema.NonEmptyString,
  aid: Schema.NonEmptyString,
  scp: Schema.Array(Schema.String),
  exp: Schema.Number
})
const decodePlatformPayload = Schema.decodeUnknownEffect(PlatformPayload)

const GrantPayload = Schema.Struct({
  sub: Schema.NonEmptyString,
  wid: Schema.NonEmptyString,
  kid: Schema.NonEmptyString,
  jti: Schema.NonEmptyString,
  iat: Schema.Int,
  exp: Schema.Int,
  trm: Schema.Record(Schema.String, Schema.Unknown)
})
const decodeGrantPayload = Schema.decodeUnknownEffect(GrantPayload)

/** A grant's audience: its purpose, so a grant verifies only where that purpose is asked for (an API key has none). */
const audienceOf = (purpose: Grant["purpose"]) => `cairn:${purpose}`

const publicPart = ({ crv, kty, x, y }: PublicJwk): PublicJwk => ({ kty, crv, x, y })

/**
 * Which documented reason a jose failure is. The signature is checked before the claims, so `wrong-issuer` and
 * `expired` only ever describe tokens we (or a kept previous key) signed.
 */
const reasonFor = (error: jose.errors.JOSEError): InvalidToken["reason"] => {
  if (error instanceof jose.errors.JWTExpired) return "expired"
  if (error instanceof jose.errors.JWTClaimValidationFailed) return error.claim === "iss" ? "wrong-issuer" : "malformed"
  // A key we do not hold, or an algorithm we do not sign with (HS256 with a guessed secret, `none`), means the
  // token is well-formed but not ours.
  if (
    error instanceof jose.errors.JWSSignatureVerificationFailed ||
    error instanceof jose.errors.JWKSNoMatchingKey ||
    error instanceof jose.errors.JOSEAlgNotAllowed
  ) return "bad-signature"
  return "malformed"
}

/** A new key set with a fresh active key and no previous keys. */
export const generate: Effect.Effect<Redacted.Redacted<KeySet>> = Effect.promise(async () => {
  const { privateKey } = await jose.generateKeyPair(algorithm, { extractable: true })
  return jose.exportJWK(privateKey)
}).pipe(
  Effect.flatMap(Schema.decodeUnknownEffect(PrivateJwk)),
  Effect.map((active) => Redacted.make({ active, previous: [] })),
  Effect.orDie
)

/**
 * The key set after a rotation: a fresh active key, and the old active key's public part first among the previous
 * keys, so its tokens keep verifying until an operator removes it.
 */
export const rotate = (keys: Redacted.Redacted<KeySet>): Effect.Effect<Redacted.Redacted<KeySet>> =>
  generate.pipe(Effect.map((fresh) => {
    const { active, previous = [] } = Redacted.value(keys)
    return Redacted.make({ active: Redacted.value(fresh).active, previous: [publicPart(active), ...previous] })
  }))

/** The key set as the key file stores it. */
export const encode = (keys: Redacted.Redacted<KeySet>): Redacted.Redacted<string> =>
  Redacted.make(`${JSON.stringify(Redacted.value(keys), null, 2)}\n`)

/** Parses a key file, or a bare private JWK, from JSON. */
export const decode = (
  json: Redacted.Redacted<string>,
  source: string
): Effect.Effect<Redacted.Redacted<KeySet>, InvalidSigningKey> =>
  Schema.decodeUnknownEffect(KeySetJson)(Redacted.value(json)).pipe(
    Effect.map((decoded) => Redacted.make("active" in decoded ? decoded : { active: decoded, previous: [] })),
    // The schema error would quote the input, which is the private key.
    Effect.mapError(() => new InvalidSigningKey({ source }))
  )

export const make = Effect.fnUntraced(function*(keys: Redacted.Redacted<KeySet>, source = "the given key set") {
  const invalid = () => new InvalidSigningKey({ source })
  const { active, previous = [] } = Redacted.value(keys)
  const signingKey = yield* Effect.tryPromise({
    try: () => jose.importJWK(active, algorithm, { extractable: false }),
    catch: invalid
  })
  const verifiers = new Map<string, { readonly key: jose.CryptoKey | Uint8Array; readonly jwk: Record<string, unknown> }>()
  for (const jwk of [active, ...previous].map(publicPart)) {
    const kid = yield* Effect.tryPromise({ try: () => jose.calculateJwkThumbprint(jwk, "sha256"), catch: invalid })
    if (verifiers.has(kid)) continue
    const key = yield* Effect.tryPromise({ try: () => jose.importJWK(jwk, algorithm), catch: invalid })
    verifiers.set(kid, { key, jwk: { ...jwk, kid, alg: algorithm, use: "sig" } })
  }
  // The active key is always the first entry: it was inserted first and is never skipped.
  const activeKid = verifiers.keys().next().value!
  // A hand-edited JWK whose `d` does not belong to its `x`/`y` would sign tokens that never verify; refuse it now
  // rather than at the first request.
  yield* Effect.tryPromise({
    try: async () => {
      const probe = await new jose.CompactSign(new Uint8Array([0])).setProtectedHeader({ alg: algorithm }).sign(signingKey)
      await jose.compactVerify(probe, verifiers.get(activeKid)!.key, { algorithms: [algorithm] })
    },
    catch: invalid
  })
  const jwks = { keys: Array.from(verifiers.values(), ({ jwk }) => jwk) }

  const keyFor: jose.JWTVerifyGetKey = (header) => {
    const verifier = header.kid === undefined ? undefined : verifiers.get(header.kid)
    if (verifier === undefined) throw new jose.errors.JWKSNoMatchingKey()
    return verifier.key
  }

  const issueApiKey = Effect.fn("JoseTokenSigner.issueApiKey")(
    function*(claims: ApiKeyClaims, options: IssueOptions = {}) {
      const nowSeconds = (yield* Clock.currentTimeMillis) / 1000
      const jwt = new jose.SignJWT({ wid: claims.workspaceId, scp: [...claims.scopes] })
        .setProtectedHeader({ alg: algorithm, kid: activeKid })
        .setIssuer(issuer)
        .setJti(claims.keyId)
        .setIssuedAt(Math.floor(nowSeconds))
      // No `sub` rather than an empty one, so that verification reports the user as missing.
      if (claims.userId !== "") jwt.setSubject(claims.userId)
      if (options.expiresInSeconds !== undefined) jwt.setExpirationTime(Math.floor(nowSeconds + options.expiresInSeconds))
      return yield* Effect.promise(() => jwt.sign(signingKey))
    }
  )

  const verified = VerifiedTokens.make()

  /** The payload of a token signed by one of our keys, by our issuer, not expired at `now`. */
  const verifiedPayload = (token: string, now: number) =>
    Effect.tryPromise({
      try: () => jose.jwtVerify(token, keyFor, { algorithms: [algorithm], issuer, currentDate: new Date(now) }),
      catch: (error) => error
    }).pipe(
      Effect.map(({ payload }) => payload),
      // Only jose's own errors describe the token; anything else is a bug here and stays a defect.
      Effect.catch((error) =>
        error instanceof jose.errors.JOSEError
          ? Effect.fail(new InvalidToken({ reason: reasonFor(error) }))
          : Effect.die(error)
      )
    )

  // A token not verified before (or since it left the memo): its signature and claims.
  const verifyFresh = Effect.fnUntraced(
    function*(token: string, now: number) {
      const payload = yield* verifiedPayload(token, now)
      const claims = yield* decodePayload(payload).pipe(
        Effect.mapError(() => new InvalidToken({ reason: "missing-claims" }))
      )
      const result = {
        userId: claims.sub ?? "",
        workspaceId: claims.wid,
        keyId: claims.jti,
        scopes: claims.scp
      } satisfies ApiKeyClaims
      verified.remember(token, result, payload.exp === undefined ? Number.POSITIVE_INFINITY : payload.exp * 1000)
      return result
    }
  )

  // On every request's path: untraced, and a remembered token costs a clock read and a map lookup, no generator.
  // The effect clock rather than jose's `Date.now`, so expiry is testable and agrees with `issueApiKey`.
  const verifyApiKey = (token: string) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) => {
      const known = verified.get(token, now)
      return known !== undefined ? Effect.succeed(known) : verifyFresh(token, now)
    })

  const issuePlatformToken = Effect.fn("JoseTokenSigner.issuePlatformToken")(function*(claims: PlatformClaims) {
    const nowSeconds = Math.floor((yield* Clock.currentTimeMillis) / 1000)
    const expires = nowSeconds + 3600
    const token = yield* Effect.promise(() =>
      new jose.SignJWT({ wid: claims.workspaceId, aid: claims.agentId, scp: ["platform"] })
        .setProtectedHeader({ alg: algorithm, kid: activeKid })
        .setIssuer(issuer)
        .setSubject(claims.userId)
        .setIssuedAt(nowSeconds)
        .setExpirationTime(expires)
        .sign(signingKey)
    )
    return { token, expiresAt: new Date(expires * 1000).toISOString() }
  })

  const verifyPlatformToken = Effect.fn("JoseTokenSigner.verifyPlatformToken")(function*(token: string) {
    const payload = yield* verifiedPayload(token, yield* Clock.currentTimeMillis)
    const claims = yield* decodePlatformPayload(payload).pipe(
      Effect.mapError(() => new InvalidToken({ reason: "missing-claims" }))
    )
    if (!claims.scp.includes("platform")) return yield* new InvalidToken({ reason: "missing-claims" })
    return { agentId: claims.aid, workspaceId: claims.wid, userId: claims.sub, expiresAt: new Date(claims.exp * 1000).toISOString() }
  })

  const issueGrant = Effect.fn("JoseTokenSigner.issueGrant")(function*(grant: Grant) {
    return yield* Effect.promise(() =>
      new jose.SignJWT({ wid: grant.workspaceId, kid: grant.keyId, trm: grant.terms })
        .setProtectedHeader({ alg: algorithm, kid: activeKid })
        .setIssuer(issuer)
        .setAudience(audienceOf(grant.purpose))
        .setSubject(grant.userId)
        .setJti(grant.grantId)
        .setIssuedAt(grant.issuedAt)
        .setExpirationTime(grant.expiresAt)
        .sign(signingKey)
    )
  })

  const verifyGrant = Effect.fn("JoseTokenSigner.verifyGrant")(function*(token: string, purpose: Grant["purpose"]) {
    const now = yield* Clock.currentTimeMillis
    const payload = yield* Effect.tryPromise({
      try: () => jose.jwtVerify(token, keyFor, { algorithms: [algorithm], issuer, audience: audienceOf(purpose), currentDate: new Date(now) }),
      catch: (error) => error
    }).pipe(
      Effect.map(({ payload }) => payload),
      Effect.catch((error) =>
        error instanceof jose.errors.JOSEError
          ? Effect.fail(new InvalidToken({
            // Our signature, but for another purpose (or an API key): not a grant of this kind.
            reason: error instanceof jose.errors.JWTClaimValidationFailed && error.claim === "aud" ? "missing-claims" : reasonFor(error)
          }))
          : Effect.die(error)
      )
    )
    const claims = yield* decodeGrantPayload(payload).pipe(Effect.mapError(() => new InvalidToken({ reason: "missing-claims" })))
    return {
      purpose,
      grantId: claims.jti,
      workspaceId: claims.wid,
      userId: claims.sub,
      keyId: claims.kid,
      issuedAt: claims.iat,
      expiresAt: claims.exp,
      terms: claims.trm
    } satisfies Grant
  })

  const encoder = new TextEncoder()
  const decoder = new TextDecoder()
  const signSeal = (payload: string) =>
    Effect.promise(() =>
      new jose.CompactSign(encoder.encode(payload)).setProtectedHeader({ alg: algorithm, kid: activeKid, typ: sealType }).sign(signingKey)
    )

  const verifySeal = (jws: string) =>
    Effect.tryPromise({
      try: () => jose.compactVerify(jws, keyFor, { algorithms: [algorithm] }),
      catch: (error) => error
    }).pipe(
      Effect.flatMap(({ payload, protectedHeader }) =>
        protectedHeader.typ === sealType ? Effect.succeed(decoder.decode(payload)) : Effect.fail(new InvalidToken({ reason: "missing-claims" }))
      ),
      Effect.catch((error) =>
        error instanceof jose.errors.JOSEError ? Effect.fail(new InvalidToken({ reason: reasonFor(error) })) : Effect.die(error)
      )
    )

  return TokenSigner.of({
    issueApiKey,
    issuePlatformToken,
    verifyApiKey,
    verifyPlatformToken,
    issueGrant,
    verifyGrant,
    signSeal,
    verifySeal,
    jwks: Effect.succeed(jwks)
  })
})

export const layer = (keys: Redacted.Redacted<KeySet>) => Layer.effect(TokenSigner, make(keys))

/** Where `layerConfig` keeps the key set when `CAIRN_SIGNING_KEY` is unset. */
export const keyFilePath = (dataDir: string) => join(dataDir, "signing-key.json")

/** Loads the key file, generating it (mode 0600, parent directories included) at first start. */
export const makeFromKeyFile = Effect.fnUntraced(function*(path: string) {
  const loaded = yield* SecretFile.readOrCreate(path, Effect.map(generate, encode))
  const signer = yield* make(yield* decode(loaded.content, path), path)
  if (loaded.created) {
    // Tokens signed by an earlier key (a deleted or replaced file) stop verifying; an operator wants to know.
    yield* Effect.logInfo(`Generated a new signing key in ${path}`)
  }
  return signer
})

export const layerFromKeyFile = (path: string) => Layer.effect(TokenSigner, makeFromKeyFile(path))

/** A private JWK (or a whole key file) given as JSON in configuration. */
export const layerFromJwk = (json: Redacted.Redacted<string>, source = "the configured signing key") =>
  Layer.effect(TokenSigner, Effect.flatMap(decode(json, source), (keys) => make(keys, source)))

/** `CAIRN_SIGNING_KEY` when set, otherwise `<dataDir>/signing-key.json`. */
export const layerConfig = (options: { readonly dataDir: string }) =>
  Layer.unwrap(
    Effect.map(
      Config.option(Config.Redacted("CAIRN_SIGNING_KEY")),
      Option.match({
        onSome: (json) => layerFromJwk(json, "CAIRN_SIGNING_KEY"),
        onNone: () => layerFromKeyFile(keyFilePath(options.dataDir))
      })
    )
  )
