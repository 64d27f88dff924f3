// Passkeys on the hosted pages (docs/reference/mfa-and-passkeys.md and docs/reference/oauth-and-oidc.md; ADR 0033). Loaded by /ui/login
// (data-passkey="login") and /ui/login/mfa (data-passkey="mfa"), after webauthn-json.js; the pages work without it,
// passkeys aside. No inline script: the pages' CSP is default-src 'self'.
//
// /ui/login: WebAuthn conditional UI (the email input has autocomplete="username webauthn";
// a conditional navigator.credentials.get() starts on load, so the browser offers the user's
// passkeys in the email field's autofill) and a "Sign in with a passkey" button, which first
// aborts the pending conditional request (only one get() may be outstanding) and then starts a
// modal one. Options come from POST /login/passkey/options; the answer goes to
// POST /ui/login/passkey, which sets the hosted-session cookie and answers {"redirect"}.
// /ui/login/mfa: the button only, with options bound to the second step's mfa_token
// (POST /ui/login/mfa/passkey/options) and the answer to POST /ui/login/mfa/passkey.
(function () {
  "use strict";

  var area = document.getElementById("passkey-area");
  var button = document.getElementById("passkey");
  var errorBox = document.getElementById("passkey-error");
  if (!area || !button || !window.PublicKeyCredential || !navigator.credentials ||
      !window.authsvcWebAuthn) {
    return;
  }
  var step = area.getAttribute("data-passkey");
  var paths = step === "mfa"
    ? {options: "/ui/login/mfa/passkey/options", finish: "/ui/login/mfa/passkey"}
    : {options: "/login/passkey/options", finish: "/ui/login/passkey"};

  var webauthn = window.authsvcWebAuthn; // webauthn-json.js, loaded first
  var field = webauthn.field;
  var requestOptions = webauthn.requestOptions;
  var credentialJSON = webauthn.credentialJSON;
  var post = webauthn.post;

  function showError(message) {
    if (!errorBox) { return; }
    errorBox.textContent = message || area.getAttribute("data-failed") ||
      "Signing in with a passkey did not work. Try again.";
    errorBox.hidden = false;
  }

  function isAbort(error) {
    return error && error.name === "AbortError";
  }

  var pending = null; // the ceremony under way: {controller, done}

  // One ceremony: options, navigator.credentials.get(), the answer. Its "done" promise
  // resolves to "leaving" (signed in: the page goes to the redirect), "refused" (the server
  // refused the answer: shown), or "ended" (aborted, dismissed, or no options).
  function ceremony(mediation) {
    var controller = new AbortController();
    var body = step === "mfa" ? {csrf_token: field("csrf_token")} : {};
    var done = post(paths.options, body).then(function (started) {
      if (!started.ok) {
        showError(started.data.detail);
        return "ended";
      }
      var request = {publicKey: requestOptions(started.data.options), signal: controller.signal};
      if (mediation) { request.mediation = mediation; }
      return navigator.credentials.get(request).then(function (credential) {
        return post(paths.finish, {
          csrf_token: field("csrf_token"),
          return_to: field("return_to"),
          ceremony_id: started.data.ceremony_id,
          credential: credentialJSON(credential)
        });
      }).then(function (finished) {
        if (finished.ok && finished.data.redirect) {
          window.location.assign(finished.data.redirect);
          return "leaving";
        }
        showError(finished.data.detail);
        return "refused";
      });
    }).catch(function (error) {
      // AbortError: the button took over; NotAllowedError: the user dismissed the dialog.
      if (!error || (error.name !== "AbortError" && error.name !== "NotAllowedError")) {
        showError(error && error.message);
      }
      return "ended";
    });
    var run = {controller: controller, done: done};
    pending = run;
    return run;
  }

  // Conditional UI on /ui/login: the browser offers passkeys in the email field's autofill.
  function startConditional() {
    if (step !== "login" || !PublicKeyCredential.isConditionalMediationAvailable) {
      return;
    }
    PublicKeyCredential.isConditionalMediationAvailable().then(function (available) {
      if (!available || pending) { return; }
      var run = ceremony("conditional");
      run.done.then(function (outcome) {
        // A refused answer: offer the passkeys again (unless the button took over).
        if (outcome === "refused" && pending === run) {
          pending = null;
          startConditional();
        }
      });
    });
  }

  button.addEventListener("click", function () {
    if (button.disabled) { return; }
    button.disabled = true;
    if (errorBox) { errorBox.hidden = true; }
    var previous = pending;
    if (previous) { previous.controller.abort(); } // one get() at a time
    var settled = previous ? previous.done : Promise.resolve("ended");
    settled.then(function () {
      return ceremony().done;
    }).then(function (outcome) {
      if (outcome !== "leaving") {
        button.disabled = false;
        pending = null;
        startConditional();
      }
    });
  });

  button.hidden = false;
  startConditional();
})();
