"""Outbound HTTP deliveries of the durable outbox (docs/adr/0049-durable-outbox.md)."""
