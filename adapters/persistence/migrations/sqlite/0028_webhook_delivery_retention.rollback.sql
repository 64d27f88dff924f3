-- Undo 0028_webhook_delivery_retention.
DROP INDEX IF EXISTS webhook_deliveries_attempted_idx;
