-- Undo 0016_federated_identities.
DROP TABLE federation_flows;
DROP TABLE federated_identities;
