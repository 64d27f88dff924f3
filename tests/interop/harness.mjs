// What the interop scripts share: named checks that record a pass or a failure and go on, the
// browser step (the caller drives the browser), and the closing report.
//
// The protocol with the caller (tests/interop/test_interop.py), line by line:
//   script → stdout  "VISIT <url>"        open <url> in the browser, log in and consent as needed
//   caller → stdin   "<url>"              the URL the browser was finally sent to (the callback)
//   script → stdout  one JSON object      what the script saw (claims, userinfo, check results)
//   script → stdout  "N passed, N failed" the closing line; the exit status is 1 on any failure
import { createInterface } from 'node:readline'

const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]()
const checks = {}

/** Hand `url` to the caller's browser; returns the URL it ended on (a string). */
export async function visit (url) {
  console.log(`VISIT ${url}`)
  const { value, done } = await lines.next()
  if (done) throw new Error('the caller closed stdin before answering a VISIT')
  return value.trim()
}

/** Run `fn`; record `name` as passed (its result) or failed (the error). Returns fn's value,
 * or undefined when it threw. */
export async function check (name, fn) {
  try {
    const value = await fn()
    checks[name] = 'ok'
    return value
  } catch (err) {
    const challenge = Array.isArray(err?.cause) ? err.cause[0]?.parameters?.error : undefined
    const detail = [err?.code, err?.error ?? challenge, err?.error_description, err?.message].filter(Boolean)
    checks[name] = `FAILED: ${detail.join(' | ')}`
    console.error(`${name}:`, err)
    return undefined
  }
}

/** Throw unless `condition`; `what` says what was expected. */
export function expect (condition, what) {
  if (!condition) throw new Error(`expected ${what}`)
}

/** Expect `fn` to throw an error whose `error` (OAuth error code) is `code` (or one of them). */
export async function expectOAuthError (fn, code) {
  const codes = [code].flat()
  let value
  try {
    value = await fn()
  } catch (err) {
    // ResponseBodyError / AuthorizationResponseError carry `error`; a WWWAuthenticateChallengeError
    // carries the parsed challenges in `cause`.
    const got = err?.error ?? err?.cause?.error ?? err?.cause?.[0]?.parameters?.error
    if (codes.includes(got)) return
    throw new Error(`expected the OAuth error ${code}, got ${got ?? err}`)
  }
  throw new Error(`expected the OAuth error ${code}, got a success ${JSON.stringify(value)}`)
}

/** Print the result object and the closing count; exit 1 on any failure. */
export function report (result) {
  const values = Object.values(checks)
  const passed = values.filter((v) => v === 'ok').length
  console.log(JSON.stringify({ ...result, checks }))
  console.log(`${passed} passed, ${values.length - passed} failed`)
  lines.return?.()
  process.exit(values.length === passed ? 0 : 1)
}

/** The script's settings from the environment; `names` are required. */
export function settings (...names) {
  const missing = names.filter((n) => !process.env[n])
  if (missing.length) {
    console.error(`missing environment: ${missing.join(', ')}`)
    process.exit(2)
  }
  return Object.fromEntries(names.map((n) => [n, process.env[n]]))
}
