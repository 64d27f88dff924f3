// oauth4webapi 3.8.8 (panva), the low-level OAuth 2 / OpenID Connect client, as a public client
// (token_endpoint_auth_method none) runs the code flow step by step against an OpenID Provider
// (contract section 15; research oidc-provider.md §5, OP-30): processDiscoveryResponse,
// validateAuthResponse (state and RFC 9207 iss; a tampered iss is refused),
// authorizationCodeGrantRequest + processAuthorizationCodeResponse (expectedNonce,
// requireIdToken), getValidatedIdTokenClaims, userInfoRequest + processUserInfoResponse.
//
// Environment: ISSUER, CLIENT_ID, REDIRECT_URI; AUTH_PARAMS (optional JSON object, as rp_flow.mjs).
import * as oauth from 'oauth4webapi'
import { check, expect, report, settings, visit } from './harness.mjs'

const env = settings('ISSUER', 'CLIENT_ID', 'REDIRECT_URI')
const extra = JSON.parse(process.env.AUTH_PARAMS || '{}')
const result = { script: 'rp_o4w', library: 'oauth4webapi@3.8.8', mode: 'public' }
const insecure = { [oauth.allowInsecureRequests]: true } // the test issuers are http://127.0.0.1
const issuer = new URL(env.ISSUER)
const client = { client_id: env.CLIENT_ID }
const none = oauth.None()

const as = await check('discovery', async () => {
  const response = await oauth.discoveryRequest(issuer, { algorithm: 'oidc', ...insecure })
  const meta = await oauth.processDiscoveryResponse(issuer, response)
  expect(meta.code_challenge_methods_supported?.includes('S256'), 'S256 among the PKCE methods')
  return meta
})
if (!as) report(result)

const verifier = oauth.generateRandomCodeVerifier()
const state = oauth.generateRandomState()
const nonce = oauth.generateRandomNonce()
const url = new URL(as.authorization_endpoint)
for (const [name, value] of Object.entries({
  client_id: client.client_id,
  redirect_uri: env.REDIRECT_URI,
  response_type: 'code',
  scope: 'openid email',
  code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
  code_challenge_method: 'S256',
  state,
  nonce,
  ...extra,
})) url.searchParams.set(name, value)
const callback = new URL(await visit(url.href))
result.callback_params = [...callback.searchParams.keys()].sort()

const params = await check('validate_auth_response', async () => {
  expect(callback.href.startsWith(env.REDIRECT_URI), `the callback ${env.REDIRECT_URI}, got ${callback.href}`)
  expect(callback.searchParams.get('iss') === as.issuer, 'the RFC 9207 iss parameter')
  return oauth.validateAuthResponse(as, client, callback, state)
})

await check('tampered_iss_refused', async () => {
  const tampered = new URL(callback)
  tampered.searchParams.set('iss', 'https://attacker.example')
  try {
    oauth.validateAuthResponse(as, client, tampered, state)
  } catch (err) {
    expect(err.code === 'OAUTH_INVALID_RESPONSE', `OAUTH_INVALID_RESPONSE, got ${err.code}`)
    return
  }
  throw new Error('a tampered iss was accepted')
})

const tokens = params && await check('authorization_code_grant', async () => {
  const response = await oauth.authorizationCodeGrantRequest(
    as, client, none, params, env.REDIRECT_URI, verifier, insecure)
  const t = await oauth.processAuthorizationCodeResponse(
    as, client, response, { expectedNonce: nonce, requireIdToken: true })
  expect(t.token_type === 'bearer', `token_type bearer, got ${t.token_type}`)
  return t
})

const claims = tokens && await check('id_token_claims', () => {
  const c = oauth.getValidatedIdTokenClaims(tokens)
  expect(c.iss === as.issuer && c.nonce === nonce && c.sub, 'iss, nonce and sub')
  return c
})
result.id_token_claims = claims

result.userinfo = claims && await check('userinfo', async () => {
  const response = await oauth.userInfoRequest(as, client, tokens.access_token, insecure)
  const info = await oauth.processUserInfoResponse(as, client, claims.sub, response)
  expect(info.email, 'an email (scope email)')
  return info
})

report(result)
