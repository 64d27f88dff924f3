// openid-client 6.8.9 (panva) runs the device authorization grant (RFC 8628; contract section 21)
// against authsvc as a public client: initiateDeviceAuthorization, two quick polls of its own
// (authorization_pending, then slow_down), then pollDeviceAuthorizationGrant while the user
// approves in the browser (the VISIT of verification_uri_complete), the ID token checked by the
// library; a second request left alone until it expires answers expired_token.
//
// Environment: ISSUER, CLIENT_ID, DEVICE_CODE_TTL (the server's oidc.device_code_ttl, seconds).
import * as client from 'openid-client'
import { check, expect, expectOAuthError, report, settings, visit } from './harness.mjs'

const env = settings('ISSUER', 'CLIENT_ID', 'DEVICE_CODE_TTL')
const result = { script: 'rp_device', library: 'openid-client@6.8.9', mode: 'device' }
const started = Date.now()

const config = await check('discovery', async () => {
  const c = await client.discovery(new URL(env.ISSUER), env.CLIENT_ID, undefined, client.None(),
    { execute: [client.allowInsecureRequests] }) // the test issuer is http://127.0.0.1
  const meta = c.serverMetadata()
  expect(meta.device_authorization_endpoint === `${env.ISSUER}/oauth/device_authorization`,
    'the device_authorization_endpoint')
  expect(meta.grant_types_supported?.includes('urn:ietf:params:oauth:grant-type:device_code'),
    'the device code grant among the grant types')
  return c
})
if (!config) report(result)

const scope = { scope: 'openid offline_access' }
const device = await check('device_authorization', async () => {
  const d = await client.initiateDeviceAuthorization(config, scope)
  expect(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/.test(d.user_code), `a user code XXXX-XXXX, got ${d.user_code}`)
  expect(d.verification_uri === `${env.ISSUER}/ui/device`, 'verification_uri')
  expect(d.interval === 5, 'interval 5')
  return d
})
const left = await check('second_device_authorization', () => client.initiateDeviceAuthorization(config, scope))
if (!device || !left) report(result)

/** One raw poll of the token endpoint: the RFC 6749 §5.2 error code it answers. */
async function poll (deviceCode) {
  const response = await fetch(`${env.ISSUER}/oauth/token`, {
    method: 'POST',
    body: new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code: deviceCode, client_id: env.CLIENT_ID })
  })
  return (await response.json()).error
}

await check('authorization_pending', async () => {
  const error = await poll(device.device_code)
  expect(error === 'authorization_pending', `authorization_pending, got ${error}`)
})
await check('slow_down', async () => {
  const error = await poll(device.device_code)
  expect(error === 'slow_down', `slow_down, got ${error}`)
})

// The library polls (respecting the grown interval) while the user approves in the browser.
const polling = client.pollDeviceAuthorizationGrant(config, { ...device, interval: device.interval + 5 })
polling.catch(() => {}) // awaited below; no unhandled rejection meanwhile
result.browser_ended_on = await visit(device.verification_uri_complete)

const tokens = await check('device_code_grant', async () => {
  const t = await polling
  expect(t.id_token, 'an id_token')
  expect(t.refresh_token, 'a refresh_token (offline_access)')
  return t
})
if (tokens) {
  const claims = tokens.claims()
  result.id_token_claims = claims
  await check('id_token_claims', () => {
    expect(claims.iss === env.ISSUER && claims.aud === env.CLIENT_ID, 'iss and aud')
    expect(claims.nonce === undefined, 'no nonce')
  })
  await check('refresh', async () => {
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token)
    expect(refreshed.refresh_token && refreshed.refresh_token !== tokens.refresh_token, 'a rotated refresh token')
  })
}

await check('expired_token', async () => {
  const wait = started + Number(env.DEVICE_CODE_TTL) * 1000 + 1000 - Date.now()
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
  await expectOAuthError(() => client.pollDeviceAuthorizationGrant(config, { ...left, interval: 0.01 }), 'expired_token')
})
report(result)
