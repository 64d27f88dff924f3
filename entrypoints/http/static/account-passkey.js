// Passkeys on the account pages (docs/reference/mfa-and-passkeys.md and
// docs/reference/accounts.md). No inline script: the pages' CSP is default-src 'self'.
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
  if ((!button && !reauth) || !window.PublicKeyCredential || !navigator.credentials) {
    return;
  }

  function field(name) {
    var input = document.querySelector('input[name="' + name + '"]');
    return input ? input.value : "";
  }

  function fromB64url(text) {
    var b64 = text.replace(/-/g, "+").replace(/_/g, "/");
    while (b64.length % 4) { b64 += "="; }
    var raw = atob(b64);
    var bytes = new Uint8Array(raw.length);
    for (var i = 0; i < raw.length; i++) { bytes[i] = raw.charCodeAt(i); }
    return bytes.buffer;
  }

  function toB64url(buffer) {
    var bytes = new Uint8Array(buffer);
    var raw = "";
    for (var i = 0; i < bytes.length; i++) { raw += String.fromCharCode(bytes[i]); }
    return btoa(raw).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }

  // WebAuthn L3 JSON helpers when the browser has them; else the same by hand.
  function creationOptions(json) {
    if (typeof PublicKeyCredential.parseCreationOptionsFromJSON === "function") {
      return PublicKeyCredential.parseCreationOptionsFromJSON(json);
    }
    var options = Object.assign({}, json, {
      challenge: fromB64url(json.challenge),
      user: Object.assign({}, json.user, {id: fromB64url(json.user.id)})
    });
    if (json.excludeCredentials) {
      options.excludeCredentials = json.excludeCredentials.map(function (c) {
        return Object.assign({}, c, {id: fromB64url(c.id)});
      });
    }
    return options;
  }

  function requestOptions(json) {
    if (typeof PublicKeyCredential.parseRequestOptionsFromJSON === "function") {
      return PublicKeyCredential.parseRequestOptionsFromJSON(json);
    }
    var options = Object.assign({}, json, {challenge: fromB64url(json.challenge)});
    if (json.allowCredentials) {
      options.allowCredentials = json.allowCredentials.map(function (c) {
        return Object.assign({}, c, {id: fromB64url(c.id)});
      });
    }
    return options;
  }

  function assertionJSON(credential) {
    if (typeof credential.toJSON === "function") {
      return credential.toJSON();
    }
    var r = credential.response;
    return {
      id: credential.id,
      rawId: toB64url(credential.rawId),
      type: credential.type,
      authenticatorAttachment: credential.authenticatorAttachment || null,
      response: {
        clientDataJSON: toB64url(r.clientDataJSON),
        authenticatorData: toB64url(r.authenticatorData),
        signature: toB64url(r.signature),
        userHandle: r.userHandle ? toB64url(r.userHandle) : null
      },
      clientExtensionResults: credential.getClientExtensionResults()
    };
  }

  function credentialJSON(credential) {
    if (typeof credential.toJSON === "function") {
      return credential.toJSON();
    }
    var r = credential.response;
    return {
      id: credential.id,
      rawId: toB64url(credential.rawId),
      type: credential.type,
      authenticatorAttachment: credential.authenticatorAttachment || null,
      response: {
        clientDataJSON: toB64url(r.clientDataJSON),
        attestationObject: toB64url(r.attestationObject),
        transports: typeof r.getTransports === "function" ? r.getTransports() : []
      },
      clientExtensionResults: credential.getClientExtensionResults()
    };
  }

  function post(path, body) {
    return fetch(path, {
      method: "POST",
      credentials: "same-origin",
      headers: {"Content-Type": "application/json", "Accept": "application/json"},
      body: JSON.stringify(body)
    }).then(function (resp) {
      return resp.json().catch(function () { return {}; }).then(function (data) {
        return {ok: resp.ok, data: data};
      });
    });
  }

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
          credential: assertionJSON(credential)
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
