// The upstream identity provider for authsvc's federated login tests (contract section 16;
// research oidc-provider.md §4.3): panva's oidc-provider 9.13.3 on 127.0.0.1 with an ephemeral
// port, PKCE required, devInteractions on. The login typed decides the account: "<email>" is a
// verified email, "<email>:unverified" an unverified one, "<email>:absent" no email_verified;
// the whole login is the `sub`.
//
// Environment: REDIRECT_URI (authsvc's /federation/<id>/callback). Prints one JSON line
// {"issuer": ..., "client_id": ..., "client_secret": ...} once it listens.
import { createServer } from 'node:http'
import Provider from 'oidc-provider'

const server = createServer()
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
const issuer = `http://127.0.0.1:${server.address().port}`
const client = { client_id: 'authsvc-fed', client_secret: 'authsvc-fed-secret' }

const provider = new Provider(issuer, {
  clients: [{ ...client, redirect_uris: [process.env.REDIRECT_URI], response_types: ['code'],
              grant_types: ['authorization_code'], token_endpoint_auth_method: 'client_secret_basic' }],
  async findAccount (_ctx, id) {
    const [email, flag] = id.split(':')
    const claims = { sub: id, email, name: email.split('@')[0] }
    if (flag !== 'absent') claims.email_verified = flag !== 'unverified'
    return { accountId: id, async claims () { return claims } }
  },
  claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
  pkce: { required: () => true },
  features: { devInteractions: { enabled: true } },
  cookies: { keys: ['authsvc-federation-test-only'] },
})
server.on('request', provider.callback())
process.stdout.write(JSON.stringify({ issuer, ...client }) + '\n')
