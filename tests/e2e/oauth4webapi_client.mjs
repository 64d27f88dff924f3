// An independent OAuth client (panva's oauth4webapi) against authsvc: discovery (RFC 8414),
// client credentials with client_secret_basic, then with client_secret_post and a DPoP key,
// introspection and revocation. Prints one JSON object of what it saw.
import * as oauth from 'oauth4webapi'

const issuer = new URL(process.env.ISSUER)
const insecure = { [oauth.allowInsecureRequests]: true } // the test server speaks plain HTTP
const as = await oauth.processDiscoveryResponse(
  issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }))
const client = { client_id: process.env.CLIENT_ID }
const basic = oauth.ClientSecretBasic(process.env.CLIENT_SECRET)
const post = oauth.ClientSecretPost(process.env.CLIENT_SECRET)
const scope = new URLSearchParams({ scope: 'read' })

const bearer = await oauth.processClientCredentialsResponse(as, client,
  await oauth.clientCredentialsGrantRequest(as, client, basic, scope, insecure))

const keyPair = await oauth.generateKeyPair('ES256')
const DPoP = oauth.DPoP(client, keyPair)
const bound = await oauth.processClientCredentialsResponse(as, client,
  await oauth.clientCredentialsGrantRequest(as, client, post, scope, { DPoP, ...insecure }))

const seen = await oauth.processIntrospectionResponse(as, client,
  await oauth.introspectionRequest(as, client, basic, bound.access_token, insecure))
await oauth.processRevocationResponse(
  await oauth.revocationRequest(as, client, basic, bearer.access_token, insecure))
const revoked = await oauth.processIntrospectionResponse(as, client,
  await oauth.introspectionRequest(as, client, basic, bearer.access_token, insecure))

console.log(JSON.stringify({
  bearer: { token_type: bearer.token_type, scope: bearer.scope, expires_in: bearer.expires_in },
  bound: { token_type: bound.token_type },
  introspected: { active: seen.active, token_type: seen.token_type, cnf: seen.cnf },
  revoked: { active: revoked.active },
}))
