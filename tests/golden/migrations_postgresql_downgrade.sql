BEGIN;

-- Running downgrade 0017 -> 0015

UPDATE webhook_deliveries SET status='pending' WHERE webhook_deliveries.status = 'held';

ALTER TABLE webhook_deliveries DROP CONSTRAINT ck_webhook_deliveries_status;

ALTER TABLE webhook_deliveries ADD CONSTRAINT ck_webhook_deliveries_status CHECK (status IN ('pending', 'delivered', 'failed'));

ALTER TABLE quotes DROP CONSTRAINT uq_quotes_idempotency_scope;

ALTER TABLE quotes ADD CONSTRAINT uq_quotes_idempotency_key UNIQUE (idempotency_key);

ALTER TABLE quotes DROP COLUMN idempotency_scope;

UPDATE alembic_version SET version_num='0015' WHERE alembic_version.version_num = '0017';

-- Running downgrade 0015 -> 0014

DROP INDEX ix_webhook_attempts_delivery_id;

DROP TABLE webhook_attempts;

DROP INDEX ix_webhook_deliveries_event_id;

DROP INDEX ix_webhook_deliveries_endpoint_id;

DROP INDEX ix_webhook_deliveries_due;

DROP INDEX ix_webhook_deliveries_created_at;

DROP TABLE webhook_deliveries;

DROP INDEX ix_webhook_events_subject;

DROP INDEX ix_webhook_events_created_at;

DROP TABLE webhook_events;

DROP TABLE webhook_endpoints;

UPDATE alembic_version SET version_num='0014' WHERE alembic_version.version_num = '0015';

-- Running downgrade 0014 -> 0013

DROP INDEX ix_quotes_organisation_created_at;

ALTER TABLE quotes DROP COLUMN organisation;

DROP INDEX ix_api_keys_organisation;

DROP TABLE api_keys;

UPDATE alembic_version SET version_num='0013' WHERE alembic_version.version_num = '0014';

-- Running downgrade 0013 -> 0012

ALTER TABLE sku_addons DROP CONSTRAINT ck_sku_addons_bandwidth_both_or_none;

ALTER TABLE sku_addons DROP COLUMN bandwidth_source;

ALTER TABLE sku_addons DROP COLUMN port_gbps;

ALTER TABLE sku_addons DROP COLUMN ports_per_server;

UPDATE catalog_revision SET token='<token>' WHERE catalog_revision.id = 1;

UPDATE alembic_version SET version_num='0012' WHERE alembic_version.version_num = '0013';

-- Running downgrade 0012 -> 0011

DROP INDEX ix_reservations_sku_region;

DROP TABLE reservations;

DROP INDEX ix_maintenance_holds_sku_region;

DROP TABLE maintenance_holds;

UPDATE alembic_version SET version_num='0011' WHERE alembic_version.version_num = '0012';

-- Running downgrade 0011 -> 0010

DROP INDEX ix_quote_documents_used_at;

DROP TABLE quote_documents;

CREATE TABLE quote_documents (
    html_sha256 VARCHAR(64) NOT NULL, 
    quote_id INTEGER NOT NULL, 
    pdf BYTEA NOT NULL, 
    created_at TIMESTAMP WITH TIME ZONE NOT NULL, 
    CONSTRAINT pk_quote_documents PRIMARY KEY (html_sha256), 
    CONSTRAINT fk_quote_documents_quote_id_quotes FOREIGN KEY(quote_id) REFERENCES quotes (id) ON DELETE CASCADE
);

CREATE INDEX ix_quote_documents_quote_id ON quote_documents (quote_id);

DROP INDEX ix_hub_configs_used_at;

DROP TABLE hub_configs;

CREATE TABLE hub_configs (
    id SERIAL NOT NULL, 
    hf_id VARCHAR(193) NOT NULL, 
    revision VARCHAR(100) NOT NULL, 
    config_json TEXT NOT NULL, 
    fetched_at TIMESTAMP WITH TIME ZONE NOT NULL, 
    CONSTRAINT pk_hub_configs PRIMARY KEY (id), 
    CONSTRAINT uq_hub_configs_hf_id UNIQUE (hf_id, revision)
);

UPDATE alembic_version SET version_num='0010' WHERE alembic_version.version_num = '0011';

-- Running downgrade 0010 -> 0009

DROP TABLE hub_configs;

UPDATE alembic_version SET version_num='0009' WHERE alembic_version.version_num = '0010';

-- Running downgrade 0009 -> 0008

DROP TRIGGER IF EXISTS audit_log_no_truncate ON audit_log;

UPDATE alembic_version SET version_num='0008' WHERE alembic_version.version_num = '0009';

-- Running downgrade 0008 -> 0007

UPDATE skus SET notes='Annual term 20%% off (CNY 2,240 per card per month).' WHERE skus.slug = 'a100-40g-pcie-card' AND skus.notes = '';

UPDATE skus SET notes='List range CNY 25,000-35,000 per month; annual 15%% off (20%% via custom channel, about CNY 240,000 per year).' WHERE skus.slug = 'a100-80g-sxm-8x' AND skus.notes = 'The article''s list range is CNY 25,000-35,000 per month; a custom channel may offer more off an annual term, on consultation.';

UPDATE skus SET notes='List range CNY 80,000-120,000 per month; annual 15%% off.' WHERE skus.slug = 'h100-80g-sxm-8x' AND skus.notes = 'The article''s list range is CNY 80,000-120,000 per month.';

UPDATE catalog_revision SET token='<token>' WHERE catalog_revision.id = 1;

UPDATE alembic_version SET version_num='0007' WHERE alembic_version.version_num = '0008';

-- Running downgrade 0007 -> 0006

DROP INDEX ix_quote_documents_quote_id;

DROP TABLE quote_documents;

UPDATE alembic_version SET version_num='0006' WHERE alembic_version.version_num = '0007';

-- Running downgrade 0006 -> 0005

DROP TABLE catalog_revision;

UPDATE alembic_version SET version_num='0005' WHERE alembic_version.version_num = '0006';

-- Running downgrade 0005 -> 0004

DROP TABLE exchange_rates;

DROP TABLE reference_prices;

UPDATE alembic_version SET version_num='0004' WHERE alembic_version.version_num = '0005';

-- Running downgrade 0004 -> 0003

DROP TABLE rate_limit_counters;

UPDATE alembic_version SET version_num='0003' WHERE alembic_version.version_num = '0004';

-- Running downgrade 0003 -> 0002

DROP TRIGGER IF EXISTS audit_log_append_only ON audit_log;

DROP FUNCTION IF EXISTS audit_log_append_only();

DROP INDEX ix_sku_availability_sku_id;

DROP TABLE sku_availability;

DROP INDEX ix_audit_log_entity;

DROP INDEX ix_audit_log_at;

DROP INDEX ix_audit_log_actor;

DROP INDEX ix_audit_log_action;

DROP TABLE audit_log;

DROP INDEX ix_api_tokens_user_id;

DROP TABLE api_tokens;

DROP INDEX ix_admin_sessions_user_id;

DROP TABLE admin_sessions;

DROP INDEX ix_login_attempts_email;

DROP INDEX ix_login_attempts_client_addr;

DROP INDEX ix_login_attempts_attempted_at;

DROP TABLE login_attempts;

DROP TABLE admin_users;

UPDATE alembic_version SET version_num='0002' WHERE alembic_version.version_num = '0003';

-- Running downgrade 0002 -> 0001

DROP INDEX ix_quote_lines_quote_id;

DROP TABLE quote_lines;

DROP INDEX ix_sku_addons_sku_id;

DROP TABLE sku_addons;

DROP INDEX ix_quotes_status;

DROP INDEX ix_quotes_customer_email;

DROP INDEX ix_quotes_created_at;

DROP TABLE quotes;

DROP TABLE quote_number_counters;

UPDATE alembic_version SET version_num='0001' WHERE alembic_version.version_num = '0002';

-- Running downgrade 0001 -> 

DROP INDEX ix_term_discounts_sku_id;

DROP TABLE term_discounts;

DROP INDEX ix_sku_prices_sku_id;

DROP TABLE sku_prices;

DROP TABLE skus;

DROP TABLE gpu_types;

DELETE FROM alembic_version WHERE alembic_version.version_num = '0001';

COMMIT;

