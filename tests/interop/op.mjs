// The known-good OpenID Provider for the harness self-test (research oidc-provider.md §4.3, §5):
// panva's oidc-provider 9.13.3, a certified OP, on 127.0.0.1 with an ephemeral port, the three
// test clients the harness uses against authsvc too, and its devInteractions login and consent
// pages (any login and password; the login becomes the `sub`).
//
// Environment: REDIRECT_URI and POST_LOGOUT_REDIRECT_URI (registered for every client).
// Prints one JSON line {"issuer": "http://127.0.0.1:<port>", "clients": {...}} once it
// listens, then serves until killed.
import { createServer } from 'node:http'
import Provider from 'oidc-provider'

const redirect = process.env.REDIRECT_URI
const postLogout = process.env.POST_LOGOUT_REDIRECT_URI
const secret = 'interop-confidential-secret'
const common = {
  redirect_uris: [redirect],
  post_logout_redirect_uris: [postLogout],
  grant_types: ['authorization_code', 'refresh_token'],
  response_types: ['code'],
  require_auth_time: true, // authsvc always sends auth_time (contract section 15): ask this OP too
}
const clients = {
  confidential: { client_id: 'interop-confidential', client_secret: secret },
  public: { client_id: 'interop-public' },
  dpop: { client_id: 'interop-dpop' },
}

const server = createServer()
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
const issuer = `http://127.0.0.1:${server.address().port}`

const provider = new Provider(issuer, {
  clients: [
    { ...common, ...clients.confidential, token_endpoint_auth_method: 'client_secret_basic' },
    { ...common, ...clients.public, token_endpoint_auth_method: 'none' },
    { ...common, ...clients.dpop, token_endpoint_auth_method: 'none', dpop_bound_access_tokens: true },
  ],
  async findAccount (_ctx, id) {
    return {
      accountId: id,
      async claims () { return { sub: id, email: id, email_verified: true, name: id.split('@')[0] } },
    }
  },
  claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
  features: {
    devInteractions: { enabled: true },
    rpInitiatedLogout: { enabled: true },
    dPoP: { enabled: true },
  },
  cookies: { keys: ['interop-test-only-cookie-key'] },
  // Public clients' refresh tokens rotate on every use, as authsvc's do (contract section 2).
  rotateRefreshToken: true,
})
// Silence the "you should change this" warnings of a development configuration.
provider.on('server_error', (_ctx, err) => console.error('server_error', err))
server.on('request', provider.callback())

console.log(JSON.stringify({ issuer, clients: { ...clients } }))
for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => server.close(() => process.exit(0)))
