// openid-client 6.8.9 (panva) as a confidential client authenticating with private_key_jwt (RFC
// 7523) pushes its authorization request (RFC 9126; contract section 21): discovery (PAR endpoint,
// the auth method and its algorithms), buildAuthorizationUrlWithPAR, the browser step, the code
// exchange, the ID token checked by the library; then the same client — which requires PAR — is
// refused (invalid_request at its redirect URI) without it.
//
// Environment: ISSUER, CLIENT_ID, PRIVATE_JWK (the client's ES256 private key, a JWK),
// REDIRECT_URI.
import * as client from 'openid-client'
import { check, expect, report, settings, visit } from './harness.mjs'

const env = settings('ISSUER', 'CLIENT_ID', 'PRIVATE_JWK', 'REDIRECT_URI')
const result = { script: 'rp_par', library: 'openid-client@6.8.9', mode: 'par+private_key_jwt' }

const jwk = JSON.parse(env.PRIVATE_JWK)
const key = await crypto.subtle.importKey('jwk', jwk, { name: 'ECDSA', namedCurve: 'P-256' }, false, ['sign'])
const config = await check('discovery', async () => {
  const c = await client.discovery(new URL(env.ISSUER), env.CLIENT_ID, undefined,
    client.PrivateKeyJwt({ key, kid: jwk.kid }), { execute: [client.allowInsecureRequests] })
  const meta = c.serverMetadata()
  expect(meta.pushed_authorization_request_endpoint === `${env.ISSUER}/oauth/par`, 'the PAR endpoint')
  expect(meta.token_endpoint_auth_methods_supported?.includes('private_key_jwt'), 'private_key_jwt')
  expect(meta.token_endpoint_auth_signing_alg_values_supported?.includes('ES256'), 'ES256 assertions')
  return c
})
if (!config) report(result)

const verifier = client.randomPKCECodeVerifier()
const state = client.randomState()
const nonce = client.randomNonce()
const parameters = {
  redirect_uri: env.REDIRECT_URI,
  scope: 'openid email',
  code_challenge: await client.calculatePKCECodeChallenge(verifier),
  code_challenge_method: 'S256',
  state,
  nonce
}
const url = await check('pushed_authorization_request', async () => {
  const u = await client.buildAuthorizationUrlWithPAR(config, parameters)
  expect(u.searchParams.get('request_uri')?.startsWith('urn:ietf:params:oauth:request_uri:'), 'a request_uri')
  return u
})
if (!url) report(result)
const callback = new URL(await visit(url.href))
result.callback_params = [...callback.searchParams.keys()].sort()

const tokens = await check('authorization_code_grant', async () => {
  const t = await client.authorizationCodeGrant(config, callback,
    { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce, idTokenExpected: true })
  expect(t.id_token, 'an id_token')
  return t
})
if (tokens) result.id_token_claims = tokens.claims()

await check('without_par_refused', async () => {
  const plain = client.buildAuthorizationUrl(config, { ...parameters, state: client.randomState() })
  const refused = new URL(await visit(plain.href))
  expect(refused.href.startsWith(env.REDIRECT_URI), `the redirect URI, got ${refused.href}`)
  expect(refused.searchParams.get('error') === 'invalid_request', `invalid_request, got ${refused.search}`)
})
report(result)
