// openid-client 6.8.9 (panva), a certified relying party library, runs the whole authorization
// code flow against an OpenID Provider (contract section 15; research oidc-provider.md §5, OP-30):
// discovery, PKCE S256 + state + nonce, the browser step (see harness.mjs), the code exchange with
// every check the library makes (RFC 9207 `iss`, ID token signature/iss/aud/exp/iat/nonce),
// userinfo, a refresh, code reuse (refused, and the tokens of its first use revoked),
// RP-initiated logout to a registered URI with `state`, and then prompt=none → login_required.
//
// Environment: ISSUER, CLIENT_ID, MODE (confidential | public | dpop), CLIENT_SECRET (confidential),
// REDIRECT_URI, POST_LOGOUT_REDIRECT_URI; AUTH_PARAMS (optional JSON object: extra authorization
// request parameters an OP needs, e.g. oidc-provider's prompt=consent for offline_access).
import * as client from 'openid-client'
import { check, expect, expectOAuthError, report, settings, visit } from './harness.mjs'

const env = settings('ISSUER', 'CLIENT_ID', 'MODE', 'REDIRECT_URI', 'POST_LOGOUT_REDIRECT_URI')
const extra = JSON.parse(process.env.AUTH_PARAMS || '{}')
const result = { script: 'rp_flow', library: 'openid-client@6.8.9', mode: env.MODE }

const auth = env.MODE === 'confidential'
  ? client.ClientSecretBasic(settings('CLIENT_SECRET').CLIENT_SECRET)
  : client.None()
const config = await check('discovery', async () => {
  const c = await client.discovery(new URL(env.ISSUER), env.CLIENT_ID, undefined, auth,
    { execute: [client.allowInsecureRequests] }) // the test issuers are http://127.0.0.1
  const meta = c.serverMetadata()
  expect(meta.issuer === env.ISSUER, `issuer ${env.ISSUER}, got ${meta.issuer}`)
  expect(meta.code_challenge_methods_supported?.includes('S256'), 'S256 among the PKCE methods')
  expect(meta.authorization_response_iss_parameter_supported === true, 'RFC 9207 iss announced')
  expect(meta.end_session_endpoint, 'an end_session_endpoint')
  return c
})
if (!config) report(result)

// DPoP (RFC 9449): one key for the whole flow; the access tokens and the refresh token bind to it.
const dpop = env.MODE === 'dpop'
  ? { DPoP: client.getDPoPHandle(config, await client.randomDPoPKeyPair('ES256')) }
  : {}
const tokenType = env.MODE === 'dpop' ? 'dpop' : 'bearer'

const verifier = client.randomPKCECodeVerifier()
const state = client.randomState()
const nonce = client.randomNonce()
const authorizationUrl = client.buildAuthorizationUrl(config, {
  redirect_uri: env.REDIRECT_URI,
  scope: 'openid email profile offline_access',
  code_challenge: await client.calculatePKCECodeChallenge(verifier),
  code_challenge_method: 'S256',
  state,
  nonce,
  ...extra,
})
const callback = new URL(await visit(authorizationUrl.href))
result.callback_params = [...callback.searchParams.keys()].sort()
const checks = { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce, idTokenExpected: true }

const tokens = await check('authorization_code_grant', async () => {
  expect(callback.href.startsWith(env.REDIRECT_URI), `the callback ${env.REDIRECT_URI}, got ${callback.href}`)
  const t = await client.authorizationCodeGrant(config, callback, checks, undefined, dpop)
  expect(t.token_type === tokenType, `token_type ${tokenType}, got ${t.token_type}`)
  expect(t.id_token, 'an id_token')
  expect(t.refresh_token, 'a refresh_token (offline_access granted)')
  return t
})
if (!tokens) report(result)

const claims = tokens.claims()
result.id_token_claims = claims
result.scope = tokens.scope
await check('id_token_claims', () => {
  expect(claims.iss === env.ISSUER, `iss ${env.ISSUER}`)
  expect(claims.aud === env.CLIENT_ID || claims.aud?.includes?.(env.CLIENT_ID), 'aud with the client id')
  expect(claims.nonce === nonce, 'the nonce sent')
  expect(typeof claims.sub === 'string' && claims.sub, 'a sub')
  expect(Number.isInteger(claims.auth_time), 'auth_time')
})

result.userinfo = await check('userinfo', async () => {
  const info = await client.fetchUserInfo(config, tokens.access_token, claims.sub, dpop)
  expect(info.email, 'an email (scope email)')
  return info
})

const refreshed = await check('refresh', async () => {
  const t = await client.refreshTokenGrant(config, tokens.refresh_token, undefined, dpop)
  expect(t.token_type === tokenType, `token_type ${tokenType}, got ${t.token_type}`)
  expect(t.access_token !== tokens.access_token, 'a new access token')
  if (t.id_token) {
    const again = t.claims()
    for (const name of ['iss', 'sub', 'aud', 'auth_time']) {
      expect(JSON.stringify(again[name]) === JSON.stringify(claims[name]), `the refreshed ID token's ${name} kept`)
    }
  }
  const info = await client.fetchUserInfo(config, t.access_token, claims.sub, dpop)
  expect(info.sub === claims.sub, 'userinfo with the refreshed access token')
  return t
})
result.refresh_rotated = refreshed ? Boolean(refreshed.refresh_token && refreshed.refresh_token !== tokens.refresh_token) : null
const latest = refreshed?.refresh_token ?? tokens.refresh_token
const latestAccess = refreshed?.access_token ?? tokens.access_token

if (env.MODE === 'dpop') {
  await check('dpop_binding', async () => {
    // The same access token with another key's proof is refused (RFC 9449 §7.1).
    const other = { DPoP: client.getDPoPHandle(config, await client.randomDPoPKeyPair('ES256')) }
    await expectOAuthError(() => client.fetchUserInfo(config, latestAccess, claims.sub, other),
      ['invalid_dpop_proof', 'invalid_token'])
  })
}

await check('code_reuse_refused_and_revokes', async () => {
  await expectOAuthError(() => client.authorizationCodeGrant(config, callback, checks, undefined, dpop), 'invalid_grant')
  // RFC 9700 §4.2.4: the tokens issued from the code's first use are revoked.
  await expectOAuthError(() => client.refreshTokenGrant(config, latest, undefined, dpop), 'invalid_grant')
  await expectOAuthError(() => client.fetchUserInfo(config, latestAccess, claims.sub, dpop), 'invalid_token')
})

await check('end_session', async () => {
  const logoutState = client.randomState()
  const url = client.buildEndSessionUrl(config, {
    id_token_hint: tokens.id_token,
    post_logout_redirect_uri: env.POST_LOGOUT_REDIRECT_URI,
    state: logoutState,
  })
  const back = new URL(await visit(url.href))
  expect(back.href.startsWith(env.POST_LOGOUT_REDIRECT_URI), `a redirect to ${env.POST_LOGOUT_REDIRECT_URI}, got ${back.href}`)
  expect(back.searchParams.get('state') === logoutState, 'the logout state back')
})

await check('prompt_none_after_logout', async () => {
  const v = client.randomPKCECodeVerifier()
  const s = client.randomState()
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: env.REDIRECT_URI,
    scope: 'openid',
    code_challenge: await client.calculatePKCECodeChallenge(v),
    code_challenge_method: 'S256',
    state: s,
    prompt: 'none',
  })
  const back = new URL(await visit(url.href))
  // The library checks state and iss of the error response, then throws the OP's error.
  await expectOAuthError(() => client.authorizationCodeGrant(config, back, { pkceCodeVerifier: v, expectedState: s }, undefined, dpop), 'login_required')
})

report(result)
