// The WebAuthn JSON helpers every passkey page shares (docs/reference/mfa-and-passkeys.md):
// loaded before passkey.js (the sign-in pages) and account-passkey.js (the account pages), it
// defines window.authsvcWebAuthn. The browser's WebAuthn Level 3 JSON methods
// (PublicKeyCredential.parseRequestOptionsFromJSON, parseCreationOptionsFromJSON,
// PublicKeyCredential.toJSON) when it has them; else the same by hand, base64url without padding.
// No inline script: the pages' CSP is default-src 'self'.
(function () {
  "use strict";

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

  function withIds(list) {
    return list.map(function (c) { return Object.assign({}, c, {id: fromB64url(c.id)}); });
  }

  function requestOptions(json) {
    if (typeof PublicKeyCredential.parseRequestOptionsFromJSON === "function") {
      return PublicKeyCredential.parseRequestOptionsFromJSON(json);
    }
    var options = Object.assign({}, json, {challenge: fromB64url(json.challenge)});
    if (json.allowCredentials) { options.allowCredentials = withIds(json.allowCredentials); }
    return options;
  }

  function creationOptions(json) {
    if (typeof PublicKeyCredential.parseCreationOptionsFromJSON === "function") {
      return PublicKeyCredential.parseCreationOptionsFromJSON(json);
    }
    var options = Object.assign({}, json, {
      challenge: fromB64url(json.challenge),
      user: Object.assign({}, json.user, {id: fromB64url(json.user.id)})
    });
    if (json.excludeCredentials) { options.excludeCredentials = withIds(json.excludeCredentials); }
    return options;
  }

  // An assertion (navigator.credentials.get) or an attestation (create) as JSON.
  function credentialJSON(credential) {
    if (typeof credential.toJSON === "function") {
      return credential.toJSON();
    }
    var r = credential.response;
    var response = {clientDataJSON: toB64url(r.clientDataJSON)};
    if (r.attestationObject) {
      response.attestationObject = toB64url(r.attestationObject);
      response.transports = typeof r.getTransports === "function" ? r.getTransports() : [];
    } else {
      response.authenticatorData = toB64url(r.authenticatorData);
      response.signature = toB64url(r.signature);
      response.userHandle = r.userHandle ? toB64url(r.userHandle) : null;
    }
    return {
      id: credential.id,
      rawId: toB64url(credential.rawId),
      type: credential.type,
      authenticatorAttachment: credential.authenticatorAttachment || null,
      response: response,
      clientExtensionResults: credential.getClientExtensionResults()
    };
  }

  // POST JSON with the session cookie; resolves to {ok, data} (data {} for a body that is not JSON).
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

  window.authsvcWebAuthn = {
    field: field,
    requestOptions: requestOptions,
    creationOptions: creationOptions,
    credentialJSON: credentialJSON,
    post: post
  };
})();
