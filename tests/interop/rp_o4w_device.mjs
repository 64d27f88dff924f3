// oauth4webapi 3.8.8 (panva), the low-level client, runs the device authorization grant (RFC 8628;
// contract section 21) step by step as a public client: deviceAuthorizationRequest +
// processDeviceAuthorizationResponse, deviceCodeGrantRequest + processDeviceCodeResponse answering
// authorization_pending then slow_down, the user's approval in the browser, then the token
// response after the grown interval, with the ID token's claims validated.
//
// Environment: ISSUER, CLIENT_ID.
import * as oauth from 'oauth4webapi'
import { check, expect, expectOAuthError, report, settings, visit } from './harness.mjs'

const env = settings('ISSUER', 'CLIENT_ID')
const result = { script: 'rp_o4w_device', library: 'oauth4webapi@3.8.8', mode: 'device' }
const insecure = { [oauth.allowInsecureRequests]: true } // the test issuer is http://127.0.0.1
const issuer = new URL(env.ISSUER)
const client = { client_id: env.CLIENT_ID }
const none = oauth.None()

const as = await check('discovery', async () => {
  const response = await oauth.discoveryRequest(issuer, { algorithm: 'oidc', ...insecure })
  const meta = await oauth.processDiscoveryResponse(issuer, response)
  expect(meta.device_authorization_endpoint, 'a device_authorization_endpoint')
  return meta
})
if (!as) report(result)

const device = await check('device_authorization', async () => {
  const response = await oauth.deviceAuthorizationRequest(as, client, none, { scope: 'openid' }, insecure)
  return oauth.processDeviceAuthorizationResponse(as, client, response)
})
if (!device) report(result)

async function poll () {
  const response = await oauth.deviceCodeGrantRequest(as, client, none, device.device_code, insecure)
  return oauth.processDeviceCodeResponse(as, client, response)
}

await check('authorization_pending', () => expectOAuthError(poll, 'authorization_pending'))
await check('slow_down', () => expectOAuthError(poll, 'slow_down'))
result.browser_ended_on = await visit(device.verification_uri_complete)

const tokens = await check('device_code_grant', async () => {
  await new Promise((resolve) => setTimeout(resolve, (device.interval + 5) * 1000))
  const t = await poll()
  expect(t.id_token, 'an id_token')
  return t
})
if (tokens) {
  await check('id_token_claims', () => {
    const claims = oauth.getValidatedIdTokenClaims(tokens)
    result.id_token_claims = claims
    expect(claims.aud === env.CLIENT_ID, 'aud is the client')
  })
}
await check('used_once', () => expectOAuthError(poll, ['invalid_grant', 'slow_down']))
report(result)
