"""The upstream identity providers' client (docs/reference/federation.md)."""
