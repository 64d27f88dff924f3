"""Integration with other systems (docs/reference/webhooks.md): webhook endpoints (manage), the
audit writer's fan-out to them (fanout), their delivery from the outbox (delivery) and the
``[webhooks]`` settings."""
