-- depends: 0027_scim_attributes
-- The delivery log's retention (docs/reference/webhooks.md; ADR 0053): housekeeping deletes the
-- tries attempted before now - webhooks.delivery_retention, in bounded batches; this index lets
-- each batch find its oldest rows without scanning the table.
CREATE INDEX webhook_deliveries_attempted_idx ON webhook_deliveries (attempted_at);
