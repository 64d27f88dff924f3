-- Undo 0026_webhooks.
DROP TABLE webhook_deliveries;
DROP TABLE webhooks;
