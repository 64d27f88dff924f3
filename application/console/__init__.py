"""The admin console's own use cases (docs/reference/console.md): who is at the console (the
hosted session's caller), its dashboard and the people its audit rows name. Every other page
calls the JSON API's use cases."""
