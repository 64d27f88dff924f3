"""The admin console (docs/reference/console.md): its pages over the JSON API's use cases."""
