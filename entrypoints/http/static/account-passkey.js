// Passkeys on the account pages (docs/reference/mfa-and-passkeys.md and
// docs/reference/accounts.md), after webauthn-json.js. No inline script: the pages' CSP is
// default-src 'self'.
//
// /ui/account/passkeys: the "Add a passkey" button asks POST /ui/account/passkeys/options for
// creation options (a stale sign-in answers 401 with {"redirect"}: the re-authentication page),
// runs navigator.credentials.create(), and sends the answer to POST /ui/account/passkeys/add,
// which answers {"redirect"} (the list again).
// /ui/account/reauthenticate: the "Use a passkey" button asks POST /login/passkey/options for
// the user's request options, runs navigator.credentials.get(), and sends the assertion to
// POST /ui/account/reauthenticate/passkey, which answers {"redirect"} (the page asked for).
// Every call to a /ui path carries the page's csrf_token.
(function () {
  "use strict";

  var button = document.getElementById("passkey-add");
  var reauth = document.getElementById("passkey-reauth");
  var errorBox = document.getElementById("passkey-error");
  var unsupported = document.getElementById("passkey-unsupported");
  if ((!button && !reauth) || !window.PublicKeyCredential || !navigator.credentials ||
      !window.authsvcWebAuthn) {
    return;
  }

  var webauthn = window.authsvcWebAuthn; // webauthn-json.js, loaded first
  var field = webauthn.field;
  var requestOptions = webauthn.requestOptions;
  var creationOptions = webauthn.creationOptions;
  var credentialJSON = webauthn.credentialJSON;
  var post = webauthn.post;

  function showError(message) {
    if (!errorBox) { return; }
    errorBox.textContent = message || errorBox.getAttribute("data-failed") ||
      "Adding the passkey did not work. Try again.";
    errorBox.hidden = false;
  }

  function finish(result) {
    if (result && result.data.redirect) { // done, or (401) confirm who you are first
      window.location.assign(result.data.redirect);
      return;
    }
    if (result) { showError(result.data.detail); }
  }

  function failed(error) {
    if (!error || error.name !== "NotAllowedError") {
      showError(error && error.message);
    }
  }

  function add() {
    var csrf = field("csrf_token");
    return post("/ui/account/passkeys/options", {csrf_token: csrf}).then(function (started) {
      if (!started.ok) {
        return started;
      }
      var request = {publicKey: creationOptions(started.data.options)};
      return navigator.credentials.create(request).then(function (credential) {
        return post("/ui/account/passkeys/add", {
          csrf_token: csrf,
          ceremony_id: started.data.ceremony_id,
          credential: credentialJSON(credential),
          name: field("passkey_name") || null
        });
      });
    });
  }

  function confirmWithPasskey() {
    var body = {email: field("username")};
    return post("/login/passkey/options", body).then(function (started) {
      if (!started.ok) {
        return started;
      }
      var request = {publicKey: requestOptions(started.data.options)};
      return navigator.credentials.get(request).then(function (credential) {
        return post("/ui/account/reauthenticate/passkey", {
          csrf_token: field("csrf_token"),
          return_to: field("return_to"),
          ceremony_id: started.data.ceremony_id,
          credential: credentialJSON(credential)
        });
      });
    });
  }

  function wire(target, action) {
    if (!target) { return; }
    target.addEventListener("click", function () {
      if (target.disabled) { return; }
      target.disabled = true;
      if (errorBox) { errorBox.hidden = true; }
      action().then(finish).catch(failed).then(function () {
        target.disabled = false;
      });
    });
    target.hidden = false;
  }

  wire(button, add);
  wire(reauth, confirmWithPasskey);
  if (unsupported) { unsupported.hidden = true; }
})();
