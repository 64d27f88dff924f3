"""The upstream identity providers' client (contract section 16)."""
