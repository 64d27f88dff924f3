"""Forward auth for reverse proxies (docs/reference/forward-auth.md): whether the browser or
bearer behind a proxied request may pass, and the browser session for protected hosts."""
