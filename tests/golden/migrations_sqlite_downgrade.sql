UPDATE webhook_deliveries SET status=? WHERE webhook_deliveries.status = ?;  -- ('pending', 'held')
CREATE TABLE _alembic_tmp_webhook_deliveries (
	id INTEGER NOT NULL, 
	event_id INTEGER NOT NULL, 
	endpoint_id INTEGER NOT NULL, 
	status VARCHAR(16) NOT NULL, 
	attempts INTEGER NOT NULL, 
	next_attempt_at DATETIME NOT NULL, 
	claimed_until DATETIME, 
	claim_token VARCHAR(32), 
	replay_of INTEGER, 
	last_status_code INTEGER, 
	delivered_at DATETIME, 
	created_at DATETIME NOT NULL, 
	CONSTRAINT ck_webhook_deliveries_status CHECK (status IN ('pending', 'delivered', 'failed')), 
	CONSTRAINT fk_webhook_deliveries_endpoint_id_webhook_endpoints FOREIGN KEY(endpoint_id) REFERENCES webhook_endpoints (id) ON DELETE CASCADE, 
	CONSTRAINT fk_webhook_deliveries_event_id_webhook_events FOREIGN KEY(event_id) REFERENCES webhook_events (id) ON DELETE CASCADE, 
	CONSTRAINT pk_webhook_deliveries PRIMARY KEY (id)
);  -- ()
INSERT INTO _alembic_tmp_webhook_deliveries (id, event_id, endpoint_id, status, attempts, next_attempt_at, claimed_until, claim_token, replay_of, last_status_code, delivered_at, created_at) SELECT webhook_deliveries.id, webhook_deliveries.event_id, webhook_deliveries.endpoint_id, webhook_deliveries.status, webhook_deliveries.attempts, webhook_deliveries.next_attempt_at, webhook_deliveries.claimed_until, webhook_deliveries.claim_token, webhook_deliveries.replay_of, webhook_deliveries.last_status_code, webhook_deliveries.delivered_at, webhook_deliveries.created_at 
FROM webhook_deliveries;  -- ()
DROP TABLE webhook_deliveries;  -- ()
ALTER TABLE _alembic_tmp_webhook_deliveries RENAME TO webhook_deliveries;  -- ()
CREATE INDEX ix_webhook_deliveries_created_at ON webhook_deliveries (created_at);  -- ()
CREATE INDEX ix_webhook_deliveries_due ON webhook_deliveries (status, next_attempt_at);  -- ()
CREATE INDEX ix_webhook_deliveries_endpoint_id ON webhook_deliveries (endpoint_id);  -- ()
CREATE INDEX ix_webhook_deliveries_event_id ON webhook_deliveries (event_id);  -- ()
CREATE TABLE _alembic_tmp_quotes (
	id INTEGER NOT NULL, 
	public_id VARCHAR(64) NOT NULL, 
	number VARCHAR(32) NOT NULL, 
	year INTEGER NOT NULL, 
	sequence BIGINT NOT NULL, 
	status VARCHAR(16) NOT NULL, 
	valid_until DATETIME NOT NULL, 
	currency VARCHAR(3) NOT NULL, 
	sku_id INTEGER, 
	sku_slug VARCHAR(64) NOT NULL, 
	sku_version INTEGER NOT NULL, 
	sku_price_id INTEGER NOT NULL, 
	term VARCHAR(16) NOT NULL, 
	months INTEGER NOT NULL, 
	quantity INTEGER NOT NULL, 
	discount_bp INTEGER NOT NULL, 
	unit_list_minor BIGINT NOT NULL, 
	unit_effective_minor BIGINT NOT NULL, 
	subtotal_minor BIGINT NOT NULL, 
	discount_total_minor BIGINT NOT NULL, 
	total_minor BIGINT NOT NULL, 
	estimator_version VARCHAR(32) NOT NULL, 
	snapshot JSON NOT NULL, 
	customer_name VARCHAR(200) NOT NULL, 
	customer_company VARCHAR(200) NOT NULL, 
	customer_email VARCHAR(320) NOT NULL, 
	idempotency_key VARCHAR(255), 
	request_hash VARCHAR(64), 
	accepted_at DATETIME, 
	cancelled_at DATETIME, 
	cancelled_by VARCHAR(200), 
	cancel_reason TEXT NOT NULL, 
	created_at DATETIME NOT NULL, 
	updated_at DATETIME NOT NULL, 
	organisation VARCHAR(100), 
	CONSTRAINT ck_quotes_months_positive CHECK (months > 0), 
	CONSTRAINT ck_quotes_quantity_positive CHECK (quantity > 0), 
	CONSTRAINT ck_quotes_status CHECK (status IN ('issued', 'accepted', 'cancelled', 'expired')), 
	CONSTRAINT ck_quotes_term CHECK (term IN ('monthly', 'annual')), 
	CONSTRAINT fk_quotes_sku_id_skus FOREIGN KEY(sku_id) REFERENCES skus (id) ON DELETE SET NULL, 
	CONSTRAINT pk_quotes PRIMARY KEY (id), 
	CONSTRAINT uq_quotes_idempotency_key UNIQUE (idempotency_key), 
	CONSTRAINT uq_quotes_number UNIQUE (number), 
	CONSTRAINT uq_quotes_public_id UNIQUE (public_id), 
	CONSTRAINT uq_quotes_year UNIQUE (year, sequence)
);  -- ()
INSERT INTO _alembic_tmp_quotes (id, public_id, number, year, sequence, status, valid_until, currency, sku_id, sku_slug, sku_version, sku_price_id, term, months, quantity, discount_bp, unit_list_minor, unit_effective_minor, subtotal_minor, discount_total_minor, total_minor, estimator_version, snapshot, customer_name, customer_company, customer_email, idempotency_key, request_hash, accepted_at, cancelled_at, cancelled_by, cancel_reason, created_at, updated_at, organisation) SELECT quotes.id, quotes.public_id, quotes.number, quotes.year, quotes.sequence, quotes.status, quotes.valid_until, quotes.currency, quotes.sku_id, quotes.sku_slug, quotes.sku_version, quotes.sku_price_id, quotes.term, quotes.months, quotes.quantity, quotes.discount_bp, quotes.unit_list_minor, quotes.unit_effective_minor, quotes.subtotal_minor, quotes.discount_total_minor, quotes.total_minor, quotes.estimator_version, quotes.snapshot, quotes.customer_name, quotes.customer_company, quotes.customer_email, quotes.idempotency_key, quotes.request_hash, quotes.accepted_at, quotes.cancelled_at, quotes.cancelled_by, quotes.cancel_reason, quotes.created_at, quotes.updated_at, quotes.organisation 
FROM quotes;  -- ()
DROP TABLE quotes;  -- ()
ALTER TABLE _alembic_tmp_quotes RENAME TO quotes;  -- ()
CREATE INDEX ix_quotes_created_at ON quotes (created_at);  -- ()
CREATE INDEX ix_quotes_customer_email ON quotes (customer_email);  -- ()
CREATE INDEX ix_quotes_organisation_created_at ON quotes (organisation, created_at, id);  -- ()
CREATE INDEX ix_quotes_status ON quotes (status);  -- ()
UPDATE alembic_version SET version_num='0015' WHERE alembic_version.version_num = '0017';  -- ()
DROP INDEX ix_webhook_attempts_delivery_id;  -- ()
DROP TABLE webhook_attempts;  -- ()
DROP INDEX ix_webhook_deliveries_created_at;  -- ()
DROP INDEX ix_webhook_deliveries_due;  -- ()
DROP INDEX ix_webhook_deliveries_endpoint_id;  -- ()
DROP INDEX ix_webhook_deliveries_event_id;  -- ()
DROP TABLE webhook_deliveries;  -- ()
DROP INDEX ix_webhook_events_created_at;  -- ()
DROP INDEX ix_webhook_events_subject;  -- ()
DROP TABLE webhook_events;  -- ()
DROP TABLE webhook_endpoints;  -- ()
UPDATE alembic_version SET version_num='0014' WHERE alembic_version.version_num = '0015';  -- ()
CREATE TABLE _alembic_tmp_quotes (
	id INTEGER NOT NULL, 
	public_id VARCHAR(64) NOT NULL, 
	number VARCHAR(32) NOT NULL, 
	year INTEGER NOT NULL, 
	sequence BIGINT NOT NULL, 
	status VARCHAR(16) NOT NULL, 
	valid_until DATETIME NOT NULL, 
	currency VARCHAR(3) NOT NULL, 
	sku_id INTEGER, 
	sku_slug VARCHAR(64) NOT NULL, 
	sku_version INTEGER NOT NULL, 
	sku_price_id INTEGER NOT NULL, 
	term VARCHAR(16) NOT NULL, 
	months INTEGER NOT NULL, 
	quantity INTEGER NOT NULL, 
	discount_bp INTEGER NOT NULL, 
	unit_list_minor BIGINT NOT NULL, 
	unit_effective_minor BIGINT NOT NULL, 
	subtotal_minor BIGINT NOT NULL, 
	discount_total_minor BIGINT NOT NULL, 
	total_minor BIGINT NOT NULL, 
	estimator_version VARCHAR(32) NOT NULL, 
	snapshot JSON NOT NULL, 
	customer_name VARCHAR(200) NOT NULL, 
	customer_company VARCHAR(200) NOT NULL, 
	customer_email VARCHAR(320) NOT NULL, 
	idempotency_key VARCHAR(255), 
	request_hash VARCHAR(64), 
	accepted_at DATETIME, 
	cancelled_at DATETIME, 
	cancelled_by VARCHAR(200), 
	cancel_reason TEXT NOT NULL, 
	created_at DATETIME NOT NULL, 
	updated_at DATETIME NOT NULL, 
	CONSTRAINT ck_quotes_months_positive CHECK (months > 0), 
	CONSTRAINT ck_quotes_quantity_positive CHECK (quantity > 0), 
	CONSTRAINT ck_quotes_status CHECK (status IN ('issued', 'accepted', 'cancelled', 'expired')), 
	CONSTRAINT ck_quotes_term CHECK (term IN ('monthly', 'annual')), 
	CONSTRAINT fk_quotes_sku_id_skus FOREIGN KEY(sku_id) REFERENCES skus (id) ON DELETE SET NULL, 
	CONSTRAINT pk_quotes PRIMARY KEY (id), 
	CONSTRAINT uq_quotes_idempotency_key UNIQUE (idempotency_key), 
	CONSTRAINT uq_quotes_number UNIQUE (number), 
	CONSTRAINT uq_quotes_public_id UNIQUE (public_id), 
	CONSTRAINT uq_quotes_year UNIQUE (year, sequence)
);  -- ()
INSERT INTO _alembic_tmp_quotes (id, public_id, number, year, sequence, status, valid_until, currency, sku_id, sku_slug, sku_version, sku_price_id, term, months, quantity, discount_bp, unit_list_minor, unit_effective_minor, subtotal_minor, discount_total_minor, total_minor, estimator_version, snapshot, customer_name, customer_company, customer_email, idempotency_key, request_hash, accepted_at, cancelled_at, cancelled_by, cancel_reason, created_at, updated_at) SELECT quotes.id, quotes.public_id, quotes.number, quotes.year, quotes.sequence, quotes.status, quotes.valid_until, quotes.currency, quotes.sku_id, quotes.sku_slug, quotes.sku_version, quotes.sku_price_id, quotes.term, quotes.months, quotes.quantity, quotes.discount_bp, quotes.unit_list_minor, quotes.unit_effective_minor, quotes.subtotal_minor, quotes.discount_total_minor, quotes.total_minor, quotes.estimator_version, quotes.snapshot, quotes.customer_name, quotes.customer_company, quotes.customer_email, quotes.idempotency_key, quotes.request_hash, quotes.accepted_at, quotes.cancelled_at, quotes.cancelled_by, quotes.cancel_reason, quotes.created_at, quotes.updated_at 
FROM quotes;  -- ()
DROP TABLE quotes;  -- ()
ALTER TABLE _alembic_tmp_quotes RENAME TO quotes;  -- ()
CREATE INDEX ix_quotes_created_at ON quotes (created_at);  -- ()
CREATE INDEX ix_quotes_customer_email ON quotes (customer_email);  -- ()
CREATE INDEX ix_quotes_status ON quotes (status);  -- ()
DROP INDEX ix_api_keys_organisation;  -- ()
DROP TABLE api_keys;  -- ()
UPDATE alembic_version SET version_num='0013' WHERE alembic_version.version_num = '0014';  -- ()
CREATE TABLE _alembic_tmp_sku_addons (
	id INTEGER NOT NULL, 
	sku_id INTEGER NOT NULL, 
	code VARCHAR(64) NOT NULL, 
	name VARCHAR(200) NOT NULL, 
	amount_minor BIGINT, 
	currency VARCHAR(3) NOT NULL, 
	per_unit VARCHAR(8) NOT NULL, 
	status VARCHAR(16) NOT NULL, 
	version INTEGER NOT NULL, 
	created_at DATETIME NOT NULL, 
	updated_at DATETIME NOT NULL, 
	CONSTRAINT ck_sku_addons_amount_positive CHECK (amount_minor IS NULL OR amount_minor > 0), 
	CONSTRAINT ck_sku_addons_per_unit CHECK (per_unit IN ('node', 'card')), 
	CONSTRAINT ck_sku_addons_status CHECK (status IN ('active', 'retired')), 
	CONSTRAINT fk_sku_addons_sku_id_skus FOREIGN KEY(sku_id) REFERENCES skus (id) ON DELETE CASCADE, 
	CONSTRAINT pk_sku_addons PRIMARY KEY (id), 
	CONSTRAINT uq_sku_addons_sku_id UNIQUE (sku_id, code)
);  -- ()
INSERT INTO _alembic_tmp_sku_addons (id, sku_id, code, name, amount_minor, currency, per_unit, status, version, created_at, updated_at) SELECT sku_addons.id, sku_addons.sku_id, sku_addons.code, sku_addons.name, sku_addons.amount_minor, sku_addons.currency, sku_addons.per_unit, sku_addons.status, sku_addons.version, sku_addons.created_at, sku_addons.updated_at 
FROM sku_addons;  -- ()
DROP TABLE sku_addons;  -- ()
ALTER TABLE _alembic_tmp_sku_addons RENAME TO sku_addons;  -- ()
CREATE INDEX ix_sku_addons_sku_id ON sku_addons (sku_id);  -- ()
UPDATE catalog_revision SET token=? WHERE catalog_revision.id = ?;  -- ('<token>', 1)
UPDATE alembic_version SET version_num='0012' WHERE alembic_version.version_num = '0013';  -- ()
DROP INDEX ix_reservations_sku_region;  -- ()
DROP TABLE reservations;  -- ()
DROP INDEX ix_maintenance_holds_sku_region;  -- ()
DROP TABLE maintenance_holds;  -- ()
UPDATE alembic_version SET version_num='0011' WHERE alembic_version.version_num = '0012';  -- ()
DROP INDEX ix_quote_documents_used_at;  -- ()
DROP TABLE quote_documents;  -- ()
CREATE TABLE quote_documents (
	html_sha256 VARCHAR(64) NOT NULL, 
	quote_id INTEGER NOT NULL, 
	pdf BLOB NOT NULL, 
	created_at DATETIME NOT NULL, 
	CONSTRAINT fk_quote_documents_quote_id_quotes FOREIGN KEY(quote_id) REFERENCES quotes (id) ON DELETE CASCADE, 
	CONSTRAINT pk_quote_documents PRIMARY KEY (html_sha256)
);  -- ()
CREATE INDEX ix_quote_documents_quote_id ON quote_documents (quote_id);  -- ()
DROP INDEX ix_hub_configs_used_at;  -- ()
DROP TABLE hub_configs;  -- ()
CREATE TABLE hub_configs (
	id INTEGER NOT NULL, 
	hf_id VARCHAR(193) NOT NULL, 
	revision VARCHAR(100) NOT NULL, 
	config_json TEXT NOT NULL, 
	fetched_at DATETIME NOT NULL, 
	CONSTRAINT pk_hub_configs PRIMARY KEY (id), 
	CONSTRAINT uq_hub_configs_hf_id UNIQUE (hf_id, revision)
);  -- ()
UPDATE alembic_version SET version_num='0010' WHERE alembic_version.version_num = '0011';  -- ()
DROP TABLE hub_configs;  -- ()
UPDATE alembic_version SET version_num='0009' WHERE alembic_version.version_num = '0010';  -- ()
UPDATE alembic_version SET version_num='0008' WHERE alembic_version.version_num = '0009';  -- ()
UPDATE skus SET notes=? WHERE skus.slug = ? AND skus.notes = ?;  -- ('Annual term 20% off (CNY 2,240 per card per month).', 'a100-40g-pcie-card', '')
UPDATE skus SET notes=? WHERE skus.slug = ? AND skus.notes = ?;  -- ('List range CNY 25,000-35,000 per month; annual 15% off (20% via custom channel, about CNY 240,000 per year).', 'a100-80g-sxm-8x', "The article's list range is CNY 25,000-35,000 per month; a custom channel may offer more off an annual term, on consultation.")
UPDATE skus SET notes=? WHERE skus.slug = ? AND skus.notes = ?;  -- ('List range CNY 80,000-120,000 per month; annual 15% off.', 'h100-80g-sxm-8x', "The article's list range is CNY 80,000-120,000 per month.")
UPDATE catalog_revision SET token=? WHERE catalog_revision.id = ?;  -- ('<token>', 1)
UPDATE alembic_version SET version_num='0007' WHERE alembic_version.version_num = '0008';  -- ()
DROP INDEX ix_quote_documents_quote_id;  -- ()
DROP TABLE quote_documents;  -- ()
UPDATE alembic_version SET version_num='0006' WHERE alembic_version.version_num = '0007';  -- ()
DROP TABLE catalog_revision;  -- ()
UPDATE alembic_version SET version_num='0005' WHERE alembic_version.version_num = '0006';  -- ()
DROP TABLE exchange_rates;  -- ()
DROP TABLE reference_prices;  -- ()
UPDATE alembic_version SET version_num='0004' WHERE alembic_version.version_num = '0005';  -- ()
DROP TABLE rate_limit_counters;  -- ()
UPDATE alembic_version SET version_num='0003' WHERE alembic_version.version_num = '0004';  -- ()
DROP TRIGGER IF EXISTS audit_log_no_update;  -- ()
DROP TRIGGER IF EXISTS audit_log_no_delete;  -- ()
DROP INDEX ix_sku_availability_sku_id;  -- ()
DROP TABLE sku_availability;  -- ()
DROP INDEX ix_audit_log_action;  -- ()
DROP INDEX ix_audit_log_actor;  -- ()
DROP INDEX ix_audit_log_at;  -- ()
DROP INDEX ix_audit_log_entity;  -- ()
DROP TABLE audit_log;  -- ()
DROP INDEX ix_api_tokens_user_id;  -- ()
DROP TABLE api_tokens;  -- ()
DROP INDEX ix_admin_sessions_user_id;  -- ()
DROP TABLE admin_sessions;  -- ()
DROP INDEX ix_login_attempts_attempted_at;  -- ()
DROP INDEX ix_login_attempts_client_addr;  -- ()
DROP INDEX ix_login_attempts_email;  -- ()
DROP TABLE login_attempts;  -- ()
DROP TABLE admin_users;  -- ()
UPDATE alembic_version SET version_num='0002' WHERE alembic_version.version_num = '0003';  -- ()
DROP INDEX ix_quote_lines_quote_id;  -- ()
DROP TABLE quote_lines;  -- ()
DROP INDEX ix_sku_addons_sku_id;  -- ()
DROP TABLE sku_addons;  -- ()
DROP INDEX ix_quotes_created_at;  -- ()
DROP INDEX ix_quotes_customer_email;  -- ()
DROP INDEX ix_quotes_status;  -- ()
DROP TABLE quotes;  -- ()
DROP TABLE quote_number_counters;  -- ()
UPDATE alembic_version SET version_num='0001' WHERE alembic_version.version_num = '0002';  -- ()
DROP INDEX ix_term_discounts_sku_id;  -- ()
DROP TABLE term_discounts;  -- ()
DROP INDEX ix_sku_prices_sku_id;  -- ()
DROP TABLE sku_prices;  -- ()
DROP TABLE skus;  -- ()
DROP TABLE gpu_types;  -- ()
DELETE FROM alembic_version WHERE alembic_version.version_num = '0001';  -- ()
