"""The durable outbox's delivery (docs/adr/0049-durable-outbox.md): the worker every serving
process runs, and the protocol of the handlers each kind of item has."""
