CREATE TABLE alembic_version (
	version_num VARCHAR(32) NOT NULL, 
	CONSTRAINT alembic_version_pkc PRIMARY KEY (version_num)
);  -- ()
CREATE TABLE gpu_types (
	id INTEGER NOT NULL, 
	slug VARCHAR(64) NOT NULL, 
	name VARCHAR(128) NOT NULL, 
	created_at DATETIME NOT NULL, 
	updated_at DATETIME NOT NULL, 
	CONSTRAINT pk_gpu_types PRIMARY KEY (id), 
	CONSTRAINT uq_gpu_types_slug UNIQUE (slug)
);  -- ()
CREATE TABLE skus (
	id INTEGER NOT NULL, 
	slug VARCHAR(64) NOT NULL, 
	name VARCHAR(200) NOT NULL, 
	gpu_type_id INTEGER NOT NULL, 
	rental_unit VARCHAR(8) NOT NULL, 
	gpus_per_node INTEGER NOT NULL, 
	card_counts JSON NOT NULL, 
	intra_node_link VARCHAR(32) NOT NULL, 
	interconnect VARCHAR(200) NOT NULL, 
	host_cpu VARCHAR(200) NOT NULL, 
	host_ram_gib INTEGER, 
	host_nvme_tb VARCHAR(100) NOT NULL, 
	network VARCHAR(200) NOT NULL, 
	inter_node_fabric VARCHAR(32), 
	infiniband_addon BOOLEAN NOT NULL, 
	regions JSON NOT NULL, 
	status VARCHAR(16) NOT NULL, 
	indicative_price BOOLEAN NOT NULL, 
	notes TEXT NOT NULL, 
	version INTEGER NOT NULL, 
	created_at DATETIME NOT NULL, 
	updated_at DATETIME NOT NULL, 
	CONSTRAINT ck_skus_gpus_per_node_positive CHECK (gpus_per_node > 0), 
	CONSTRAINT ck_skus_rental_unit CHECK (rental_unit IN ('card', 'node')), 
	CONSTRAINT ck_skus_status CHECK (status IN ('active', 'retired')), 
	CONSTRAINT fk_skus_gpu_type_id_gpu_types FOREIGN KEY(gpu_type_id) REFERENCES gpu_types (id), 
	CONSTRAINT pk_skus PRIMARY KEY (id), 
	CONSTRAINT uq_skus_slug UNIQUE (slug)
);  -- ()
CREATE TABLE sku_prices (
	id INTEGER NOT NULL, 
	sku_id INTEGER NOT NULL, 
	amount_minor BIGINT NOT NULL, 
	currency VARCHAR(3) NOT NULL, 
	effective_from DATETIME NOT NULL, 
	created_at DATETIME NOT NULL, 
	created_by VARCHAR(200) NOT NULL, 
	note TEXT NOT NULL, 
	CONSTRAINT ck_sku_prices_amount_positive CHECK (amount_minor > 0), 
	CONSTRAINT fk_sku_prices_sku_id_skus FOREIGN KEY(sku_id) REFERENCES skus (id) ON DELETE CASCADE, 
	CONSTRAINT pk_sku_prices PRIMARY KEY (id)
);  -- ()
CREATE INDEX ix_sku_prices_sku_id ON sku_prices (sku_id);  -- ()
CREATE TABLE term_discounts (
	id INTEGER NOT NULL, 
	sku_id INTEGER NOT NULL, 
	term VARCHAR(16) NOT NULL, 
	discount_bp INTEGER NOT NULL, 
	version INTEGER NOT NULL, 
	CONSTRAINT ck_term_discounts_discount_range CHECK (discount_bp >= 0 AND discount_bp <= 9000), 
	CONSTRAINT ck_term_discounts_term CHECK (term IN ('monthly', 'annual')), 
	CONSTRAINT fk_term_discounts_sku_id_skus FOREIGN KEY(sku_id) REFERENCES skus (id) ON DELETE CASCADE, 
	CONSTRAINT pk_term_discounts PRIMARY KEY (id), 
	CONSTRAINT uq_term_discounts_sku_id UNIQUE (sku_id, term)
);  -- ()
CREATE INDEX ix_term_discounts_sku_id ON term_discounts (sku_id);  -- ()
INSERT INTO alembic_version (version_num) VALUES ('0001') RETURNING version_num;  -- ()
CREATE TABLE quote_number_counters (
	year INTEGER NOT NULL, 
	last_value BIGINT NOT NULL, 
	CONSTRAINT pk_quote_number_counters PRIMARY KEY (year)
);  -- ()
CREATE TABLE quotes (
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
CREATE INDEX ix_quotes_created_at ON quotes (created_at);  -- ()
CREATE INDEX ix_quotes_customer_email ON quotes (customer_email);  -- ()
CREATE INDEX ix_quotes_status ON quotes (status);  -- ()
CREATE TABLE sku_addons (
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
CREATE INDEX ix_sku_addons_sku_id ON sku_addons (sku_id);  -- ()
CREATE TABLE quote_lines (
	id INTEGER NOT NULL, 
	quote_id INTEGER NOT NULL, 
	position INTEGER NOT NULL, 
	kind VARCHAR(16) NOT NULL, 
	code VARCHAR(64) NOT NULL, 
	description VARCHAR(300) NOT NULL, 
	unit VARCHAR(8) NOT NULL, 
	quantity INTEGER NOT NULL, 
	months INTEGER NOT NULL, 
	unit_price_minor BIGINT, 
	discount_bp INTEGER NOT NULL, 
	discount_minor BIGINT, 
	amount_minor BIGINT, 
	note TEXT NOT NULL, 
	created_at DATETIME NOT NULL, 
	CONSTRAINT ck_quote_lines_kind CHECK (kind IN ('rental', 'addon')), 
	CONSTRAINT fk_quote_lines_quote_id_quotes FOREIGN KEY(quote_id) REFERENCES quotes (id) ON DELETE CASCADE, 
	CONSTRAINT pk_quote_lines PRIMARY KEY (id), 
	CONSTRAINT uq_quote_lines_quote_id UNIQUE (quote_id, position)
);  -- ()
CREATE INDEX ix_quote_lines_quote_id ON quote_lines (quote_id);  -- ()
UPDATE alembic_version SET version_num='0002' WHERE alembic_version.version_num = '0001';  -- ()
CREATE TABLE admin_users (
	id INTEGER NOT NULL, 
	email VARCHAR(254) NOT NULL, 
	password_hash VARCHAR(255) NOT NULL, 
	role VARCHAR(16) NOT NULL, 
	is_active BOOLEAN NOT NULL, 
	last_login_at DATETIME, 
	created_at DATETIME NOT NULL, 
	updated_at DATETIME NOT NULL, 
	CONSTRAINT ck_admin_users_role CHECK (role IN ('admin', 'viewer')), 
	CONSTRAINT pk_admin_users PRIMARY KEY (id), 
	CONSTRAINT uq_admin_users_email UNIQUE (email)
);  -- ()
CREATE TABLE login_attempts (
	id INTEGER NOT NULL, 
	email VARCHAR(254) NOT NULL, 
	client_addr VARCHAR(64) NOT NULL, 
	attempted_at DATETIME NOT NULL, 
	succeeded BOOLEAN NOT NULL, 
	CONSTRAINT pk_login_attempts PRIMARY KEY (id)
);  -- ()
CREATE INDEX ix_login_attempts_attempted_at ON login_attempts (attempted_at);  -- ()
CREATE INDEX ix_login_attempts_client_addr ON login_attempts (client_addr);  -- ()
CREATE INDEX ix_login_attempts_email ON login_attempts (email);  -- ()
CREATE TABLE admin_sessions (
	id INTEGER NOT NULL, 
	token_hash VARCHAR(64) NOT NULL, 
	user_id INTEGER NOT NULL, 
	csrf_token VARCHAR(64) NOT NULL, 
	created_at DATETIME NOT NULL, 
	last_seen_at DATETIME NOT NULL, 
	expires_at DATETIME NOT NULL, 
	revoked_at DATETIME, 
	client_addr VARCHAR(64) NOT NULL, 
	user_agent VARCHAR(300) NOT NULL, 
	CONSTRAINT fk_admin_sessions_user_id_admin_users FOREIGN KEY(user_id) REFERENCES admin_users (id) ON DELETE CASCADE, 
	CONSTRAINT pk_admin_sessions PRIMARY KEY (id), 
	CONSTRAINT uq_admin_sessions_token_hash UNIQUE (token_hash)
);  -- ()
CREATE INDEX ix_admin_sessions_user_id ON admin_sessions (user_id);  -- ()
CREATE TABLE api_tokens (
	id INTEGER NOT NULL, 
	user_id INTEGER NOT NULL, 
	name VARCHAR(100) NOT NULL, 
	prefix VARCHAR(16) NOT NULL, 
	token_hash VARCHAR(64) NOT NULL, 
	created_at DATETIME NOT NULL, 
	last_used_at DATETIME, 
	revoked_at DATETIME, 
	CONSTRAINT fk_api_tokens_user_id_admin_users FOREIGN KEY(user_id) REFERENCES admin_users (id) ON DELETE CASCADE, 
	CONSTRAINT pk_api_tokens PRIMARY KEY (id), 
	CONSTRAINT uq_api_tokens_token_hash UNIQUE (token_hash)
);  -- ()
CREATE INDEX ix_api_tokens_user_id ON api_tokens (user_id);  -- ()
CREATE TABLE audit_log (
	id INTEGER NOT NULL, 
	at DATETIME NOT NULL, 
	actor_id INTEGER, 
	actor VARCHAR(254) NOT NULL, 
	via VARCHAR(8) NOT NULL, 
	action VARCHAR(64) NOT NULL, 
	entity_type VARCHAR(32) NOT NULL, 
	entity_id VARCHAR(200) NOT NULL, 
	"before" JSON, 
	"after" JSON, 
	client_addr VARCHAR(64) NOT NULL, 
	CONSTRAINT fk_audit_log_actor_id_admin_users FOREIGN KEY(actor_id) REFERENCES admin_users (id), 
	CONSTRAINT pk_audit_log PRIMARY KEY (id)
);  -- ()
CREATE INDEX ix_audit_log_action ON audit_log (action);  -- ()
CREATE INDEX ix_audit_log_actor ON audit_log (actor);  -- ()
CREATE INDEX ix_audit_log_at ON audit_log (at);  -- ()
CREATE INDEX ix_audit_log_entity ON audit_log (entity_type, entity_id);  -- ()
CREATE TABLE sku_availability (
	id INTEGER NOT NULL, 
	sku_id INTEGER NOT NULL, 
	region VARCHAR(64) NOT NULL, 
	units_available INTEGER NOT NULL, 
	version INTEGER NOT NULL, 
	updated_at DATETIME NOT NULL, 
	CONSTRAINT ck_sku_availability_units_non_negative CHECK (units_available >= 0), 
	CONSTRAINT fk_sku_availability_sku_id_skus FOREIGN KEY(sku_id) REFERENCES skus (id) ON DELETE CASCADE, 
	CONSTRAINT pk_sku_availability PRIMARY KEY (id), 
	CONSTRAINT uq_sku_availability_sku_id UNIQUE (sku_id, region)
);  -- ()
CREATE INDEX ix_sku_availability_sku_id ON sku_availability (sku_id);  -- ()
CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END;  -- ()
CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END;  -- ()
UPDATE alembic_version SET version_num='0003' WHERE alembic_version.version_num = '0002';  -- ()
CREATE TABLE rate_limit_counters (
	"key" VARCHAR(255) NOT NULL, 
	window_start BIGINT NOT NULL, 
	hits INTEGER NOT NULL, 
	CONSTRAINT pk_rate_limit_counters PRIMARY KEY ("key")
);  -- ()
UPDATE alembic_version SET version_num='0004' WHERE alembic_version.version_num = '0003';  -- ()
CREATE TABLE reference_prices (
	id INTEGER NOT NULL, 
	provider VARCHAR(64) NOT NULL, 
	region VARCHAR(100) NOT NULL, 
	instance_type VARCHAR(100) NOT NULL, 
	gpu_model VARCHAR(64) NOT NULL, 
	gpu_variant VARCHAR(64) NOT NULL, 
	gpu_memory_gb INTEGER NOT NULL, 
	gpu_count INTEGER NOT NULL, 
	currency VARCHAR(3) NOT NULL, 
	hourly_micros BIGINT NOT NULL, 
	pricing_type VARCHAR(64) NOT NULL, 
	data_date TEXT NOT NULL, 
	confidence VARCHAR(16) NOT NULL, 
	source TEXT NOT NULL, 
	notes TEXT NOT NULL, 
	created_at DATETIME NOT NULL, 
	CONSTRAINT ck_reference_prices_gpu_count_positive CHECK (gpu_count > 0), 
	CONSTRAINT ck_reference_prices_hourly_positive CHECK (hourly_micros > 0), 
	CONSTRAINT pk_reference_prices PRIMARY KEY (id), 
	CONSTRAINT uq_reference_prices_provider UNIQUE (provider, region, instance_type)
);  -- ()
CREATE TABLE exchange_rates (
	id INTEGER NOT NULL, 
	base VARCHAR(3) NOT NULL, 
	quote VARCHAR(3) NOT NULL, 
	rate_micros BIGINT NOT NULL, 
	effective_from DATETIME NOT NULL, 
	set_by VARCHAR(200) NOT NULL, 
	note TEXT NOT NULL, 
	CONSTRAINT ck_exchange_rates_rate_positive CHECK (rate_micros > 0), 
	CONSTRAINT pk_exchange_rates PRIMARY KEY (id)
);  -- ()
UPDATE alembic_version SET version_num='0005' WHERE alembic_version.version_num = '0004';  -- ()
CREATE TABLE catalog_revision (
	id INTEGER NOT NULL, 
	token VARCHAR(32) NOT NULL, 
	CONSTRAINT pk_catalog_revision PRIMARY KEY (id)
);  -- ()
INSERT INTO catalog_revision (id, token) VALUES (?, ?);  -- (1, '<token>')
UPDATE alembic_version SET version_num='0006' WHERE alembic_version.version_num = '0005';  -- ()
CREATE TABLE quote_documents (
	html_sha256 VARCHAR(64) NOT NULL, 
	quote_id INTEGER NOT NULL, 
	pdf BLOB NOT NULL, 
	created_at DATETIME NOT NULL, 
	CONSTRAINT fk_quote_documents_quote_id_quotes FOREIGN KEY(quote_id) REFERENCES quotes (id) ON DELETE CASCADE, 
	CONSTRAINT pk_quote_documents PRIMARY KEY (html_sha256)
);  -- ()
CREATE INDEX ix_quote_documents_quote_id ON quote_documents (quote_id);  -- ()
UPDATE alembic_version SET version_num='0007' WHERE alembic_version.version_num = '0006';  -- ()
UPDATE skus SET notes=? WHERE skus.slug = ? AND skus.notes = ?;  -- ('', 'a100-40g-pcie-card', 'Annual term 20% off (CNY 2,240 per card per month).')
UPDATE skus SET notes=? WHERE skus.slug = ? AND skus.notes = ?;  -- ("The article's list range is CNY 25,000-35,000 per month; a custom channel may offer more off an annual term, on consultation.", 'a100-80g-sxm-8x', 'List range CNY 25,000-35,000 per month; annual 15% off (20% via custom channel, about CNY 240,000 per year).')
UPDATE skus SET notes=? WHERE skus.slug = ? AND skus.notes = ?;  -- ("The article's list range is CNY 80,000-120,000 per month.", 'h100-80g-sxm-8x', 'List range CNY 80,000-120,000 per month; annual 15% off.')
UPDATE catalog_revision SET token=? WHERE catalog_revision.id = ?;  -- ('<token>', 1)
UPDATE alembic_version SET version_num='0008' WHERE alembic_version.version_num = '0007';  -- ()
UPDATE alembic_version SET version_num='0009' WHERE alembic_version.version_num = '0008';  -- ()
CREATE TABLE hub_configs (
	id INTEGER NOT NULL, 
	hf_id VARCHAR(193) NOT NULL, 
	revision VARCHAR(100) NOT NULL, 
	config_json TEXT NOT NULL, 
	fetched_at DATETIME NOT NULL, 
	CONSTRAINT pk_hub_configs PRIMARY KEY (id), 
	CONSTRAINT uq_hub_configs_hf_id UNIQUE (hf_id, revision)
);  -- ()
UPDATE alembic_version SET version_num='0010' WHERE alembic_version.version_num = '0009';  -- ()
DROP TABLE hub_configs;  -- ()
CREATE TABLE hub_configs (
	id INTEGER NOT NULL, 
	hf_key VARCHAR(193) NOT NULL, 
	revision VARCHAR(100) NOT NULL, 
	config_json TEXT, 
	miss TEXT, 
	size_bytes INTEGER NOT NULL, 
	fetched_at DATETIME NOT NULL, 
	used_at DATETIME NOT NULL, 
	expires_at DATETIME, 
	CONSTRAINT pk_hub_configs PRIMARY KEY (id), 
	CONSTRAINT uq_hub_configs_hf_key UNIQUE (hf_key, revision)
);  -- ()
CREATE INDEX ix_hub_configs_used_at ON hub_configs (used_at);  -- ()
DROP INDEX ix_quote_documents_quote_id;  -- ()
DROP TABLE quote_documents;  -- ()
CREATE TABLE quote_documents (
	quote_id INTEGER NOT NULL, 
	lang VARCHAR(8) NOT NULL, 
	html_sha256 VARCHAR(64) NOT NULL, 
	pdf BLOB NOT NULL, 
	size_bytes INTEGER NOT NULL, 
	created_at DATETIME NOT NULL, 
	used_at DATETIME NOT NULL, 
	CONSTRAINT fk_quote_documents_quote_id_quotes FOREIGN KEY(quote_id) REFERENCES quotes (id) ON DELETE CASCADE, 
	CONSTRAINT pk_quote_documents PRIMARY KEY (quote_id, lang)
);  -- ()
CREATE INDEX ix_quote_documents_used_at ON quote_documents (used_at);  -- ()
UPDATE alembic_version SET version_num='0011' WHERE alembic_version.version_num = '0010';  -- ()
CREATE TABLE maintenance_holds (
	id INTEGER NOT NULL, 
	sku_id INTEGER NOT NULL, 
	region VARCHAR(64) NOT NULL, 
	starts_on DATE NOT NULL, 
	ends_on DATE NOT NULL, 
	units INTEGER NOT NULL, 
	note TEXT NOT NULL, 
	created_by VARCHAR(200) NOT NULL, 
	created_at DATETIME NOT NULL, 
	updated_at DATETIME NOT NULL, 
	version INTEGER NOT NULL, 
	CONSTRAINT ck_maintenance_holds_ends_after_start CHECK (ends_on > starts_on), 
	CONSTRAINT ck_maintenance_holds_units_positive CHECK (units > 0), 
	CONSTRAINT fk_maintenance_holds_sku_id_skus FOREIGN KEY(sku_id) REFERENCES skus (id) ON DELETE CASCADE, 
	CONSTRAINT pk_maintenance_holds PRIMARY KEY (id), 
	CONSTRAINT uq_maintenance_holds_sku_id UNIQUE (sku_id, region, starts_on)
);  -- ()
CREATE INDEX ix_maintenance_holds_sku_region ON maintenance_holds (sku_id, region, ends_on);  -- ()
CREATE TABLE reservations (
	id INTEGER NOT NULL, 
	quote_id INTEGER NOT NULL, 
	sku_id INTEGER NOT NULL, 
	region VARCHAR(64) NOT NULL, 
	starts_on DATE NOT NULL, 
	ends_on DATE NOT NULL, 
	units INTEGER NOT NULL, 
	state VARCHAR(16) NOT NULL, 
	held_until DATETIME NOT NULL, 
	created_at DATETIME NOT NULL, 
	CONSTRAINT ck_reservations_ends_after_start CHECK (ends_on > starts_on), 
	CONSTRAINT ck_reservations_state CHECK (state IN ('held', 'confirmed', 'released')), 
	CONSTRAINT ck_reservations_units_positive CHECK (units > 0), 
	CONSTRAINT fk_reservations_quote_id_quotes FOREIGN KEY(quote_id) REFERENCES quotes (id) ON DELETE CASCADE, 
	CONSTRAINT fk_reservations_sku_id_skus FOREIGN KEY(sku_id) REFERENCES skus (id) ON DELETE CASCADE, 
	CONSTRAINT pk_reservations PRIMARY KEY (id), 
	CONSTRAINT uq_reservations_quote_id UNIQUE (quote_id)
);  -- ()
CREATE INDEX ix_reservations_sku_region ON reservations (sku_id, region, ends_on);  -- ()
UPDATE alembic_version SET version_num='0012' WHERE alembic_version.version_num = '0011';  -- ()
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
	ports_per_server INTEGER, 
	port_gbps INTEGER, 
	bandwidth_source TEXT DEFAULT '' NOT NULL, 
	CONSTRAINT ck_sku_addons_amount_positive CHECK (amount_minor IS NULL OR amount_minor > 0), 
	CONSTRAINT ck_sku_addons_bandwidth_both_or_none CHECK ((ports_per_server IS NULL AND port_gbps IS NULL) OR (ports_per_server > 0 AND port_gbps > 0)), 
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
	ports_per_server INTEGER, 
	port_gbps INTEGER, 
	bandwidth_source TEXT NOT NULL, 
	CONSTRAINT ck_sku_addons_amount_positive CHECK (amount_minor IS NULL OR amount_minor > 0), 
	CONSTRAINT ck_sku_addons_bandwidth_both_or_none CHECK ((ports_per_server IS NULL AND port_gbps IS NULL) OR (ports_per_server > 0 AND port_gbps > 0)), 
	CONSTRAINT ck_sku_addons_per_unit CHECK (per_unit IN ('node', 'card')), 
	CONSTRAINT ck_sku_addons_status CHECK (status IN ('active', 'retired')), 
	CONSTRAINT fk_sku_addons_sku_id_skus FOREIGN KEY(sku_id) REFERENCES skus (id) ON DELETE CASCADE, 
	CONSTRAINT pk_sku_addons PRIMARY KEY (id), 
	CONSTRAINT uq_sku_addons_sku_id UNIQUE (sku_id, code)
);  -- ()
INSERT INTO _alembic_tmp_sku_addons (id, sku_id, code, name, amount_minor, currency, per_unit, status, version, created_at, updated_at, ports_per_server, port_gbps, bandwidth_source) SELECT sku_addons.id, sku_addons.sku_id, sku_addons.code, sku_addons.name, sku_addons.amount_minor, sku_addons.currency, sku_addons.per_unit, sku_addons.status, sku_addons.version, sku_addons.created_at, sku_addons.updated_at, sku_addons.ports_per_server, sku_addons.port_gbps, sku_addons.bandwidth_source 
FROM sku_addons;  -- ()
DROP TABLE sku_addons;  -- ()
ALTER TABLE _alembic_tmp_sku_addons RENAME TO sku_addons;  -- ()
CREATE INDEX ix_sku_addons_sku_id ON sku_addons (sku_id);  -- ()
UPDATE sku_addons SET ports_per_server=?, port_gbps=?, bandwidth_source=? WHERE sku_addons.sku_id = (SELECT skus.id 
FROM skus 
WHERE skus.slug = ?) AND sku_addons.code = ? AND sku_addons.ports_per_server IS NULL;  -- (8, 400, "NVIDIA DGX H100 / DGX BasePOD reference architecture: eight single-port ConnectX-7 NICs, up to 400 Gb/s NDR InfiniBand each, one per GPU, for the compute fabric of an 8-GPU HGX H100 server (docs.nvidia.com/dgx-basepod/reference-architecture-infrastructure-foundation-enterprise-ai/latest/core-components.html). The company's article says only 'InfiniBand 400G optional': the port count is the reference design's, to confirm with the data centre.", 'h100-80g-sxm-8x', 'infiniband-400g')
UPDATE catalog_revision SET token=? WHERE catalog_revision.id = ?;  -- ('<token>', 1)
UPDATE alembic_version SET version_num='0013' WHERE alembic_version.version_num = '0012';  -- ()
CREATE TABLE api_keys (
	id INTEGER NOT NULL, 
	name VARCHAR(100) NOT NULL, 
	organisation VARCHAR(100) NOT NULL, 
	prefix VARCHAR(16) NOT NULL, 
	key_hash VARCHAR(64) NOT NULL, 
	scopes JSON NOT NULL, 
	rate_limit_per_minute INTEGER NOT NULL, 
	created_at DATETIME NOT NULL, 
	created_by VARCHAR(254) NOT NULL, 
	expires_at DATETIME, 
	last_used_at DATETIME, 
	revoked_at DATETIME, 
	CONSTRAINT ck_api_keys_rate_limit_positive CHECK (rate_limit_per_minute > 0), 
	CONSTRAINT pk_api_keys PRIMARY KEY (id), 
	CONSTRAINT uq_api_keys_key_hash UNIQUE (key_hash)
);  -- ()
CREATE INDEX ix_api_keys_organisation ON api_keys (organisation);  -- ()
ALTER TABLE quotes ADD COLUMN organisation VARCHAR(100);  -- ()
CREATE INDEX ix_quotes_organisation_created_at ON quotes (organisation, created_at, id);  -- ()
UPDATE alembic_version SET version_num='0014' WHERE alembic_version.version_num = '0013';  -- ()
CREATE TABLE webhook_endpoints (
	id INTEGER NOT NULL, 
	url VARCHAR(2000) NOT NULL, 
	events JSON NOT NULL, 
	secret VARCHAR(100) NOT NULL, 
	description VARCHAR(200) NOT NULL, 
	active BOOLEAN NOT NULL, 
	created_at DATETIME NOT NULL, 
	updated_at DATETIME NOT NULL, 
	CONSTRAINT pk_webhook_endpoints PRIMARY KEY (id)
);  -- ()
CREATE TABLE webhook_events (
	id INTEGER NOT NULL, 
	message_id VARCHAR(64) NOT NULL, 
	type VARCHAR(32) NOT NULL, 
	subject VARCHAR(64) NOT NULL, 
	body TEXT NOT NULL, 
	created_at DATETIME NOT NULL, 
	CONSTRAINT ck_webhook_events_type CHECK (type IN ('quote.issued', 'quote.accepted', 'quote.cancelled', 'quote.expired')), 
	CONSTRAINT pk_webhook_events PRIMARY KEY (id), 
	CONSTRAINT uq_webhook_events_message_id UNIQUE (message_id)
);  -- ()
CREATE INDEX ix_webhook_events_created_at ON webhook_events (created_at);  -- ()
CREATE INDEX ix_webhook_events_subject ON webhook_events (subject);  -- ()
CREATE TABLE webhook_deliveries (
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
CREATE INDEX ix_webhook_deliveries_created_at ON webhook_deliveries (created_at);  -- ()
CREATE INDEX ix_webhook_deliveries_due ON webhook_deliveries (status, next_attempt_at);  -- ()
CREATE INDEX ix_webhook_deliveries_endpoint_id ON webhook_deliveries (endpoint_id);  -- ()
CREATE INDEX ix_webhook_deliveries_event_id ON webhook_deliveries (event_id);  -- ()
CREATE TABLE webhook_attempts (
	id INTEGER NOT NULL, 
	delivery_id INTEGER NOT NULL, 
	at DATETIME NOT NULL, 
	status_code INTEGER, 
	duration_ms INTEGER NOT NULL, 
	error VARCHAR(300) NOT NULL, 
	response_body VARCHAR(1024) NOT NULL, 
	CONSTRAINT fk_webhook_attempts_delivery_id_webhook_deliveries FOREIGN KEY(delivery_id) REFERENCES webhook_deliveries (id) ON DELETE CASCADE, 
	CONSTRAINT pk_webhook_attempts PRIMARY KEY (id)
);  -- ()
CREATE INDEX ix_webhook_attempts_delivery_id ON webhook_attempts (delivery_id);  -- ()
UPDATE alembic_version SET version_num='0015' WHERE alembic_version.version_num = '0014';  -- ()
ALTER TABLE quotes ADD COLUMN idempotency_scope VARCHAR(100) DEFAULT '' NOT NULL;  -- ()
UPDATE quotes SET idempotency_scope=quotes.organisation WHERE quotes.organisation IS NOT NULL;  -- ()
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
	idempotency_scope VARCHAR(100) NOT NULL, 
	CONSTRAINT ck_quotes_months_positive CHECK (months > 0), 
	CONSTRAINT ck_quotes_quantity_positive CHECK (quantity > 0), 
	CONSTRAINT ck_quotes_status CHECK (status IN ('issued', 'accepted', 'cancelled', 'expired')), 
	CONSTRAINT ck_quotes_term CHECK (term IN ('monthly', 'annual')), 
	CONSTRAINT fk_quotes_sku_id_skus FOREIGN KEY(sku_id) REFERENCES skus (id) ON DELETE SET NULL, 
	CONSTRAINT pk_quotes PRIMARY KEY (id), 
	CONSTRAINT uq_quotes_idempotency_scope UNIQUE (idempotency_scope, idempotency_key), 
	CONSTRAINT uq_quotes_number UNIQUE (number), 
	CONSTRAINT uq_quotes_public_id UNIQUE (public_id), 
	CONSTRAINT uq_quotes_year UNIQUE (year, sequence)
);  -- ()
INSERT INTO _alembic_tmp_quotes (id, public_id, number, year, sequence, status, valid_until, currency, sku_id, sku_slug, sku_version, sku_price_id, term, months, quantity, discount_bp, unit_list_minor, unit_effective_minor, subtotal_minor, discount_total_minor, total_minor, estimator_version, snapshot, customer_name, customer_company, customer_email, idempotency_key, request_hash, accepted_at, cancelled_at, cancelled_by, cancel_reason, created_at, updated_at, organisation, idempotency_scope) SELECT quotes.id, quotes.public_id, quotes.number, quotes.year, quotes.sequence, quotes.status, quotes.valid_until, quotes.currency, quotes.sku_id, quotes.sku_slug, quotes.sku_version, quotes.sku_price_id, quotes.term, quotes.months, quotes.quantity, quotes.discount_bp, quotes.unit_list_minor, quotes.unit_effective_minor, quotes.subtotal_minor, quotes.discount_total_minor, quotes.total_minor, quotes.estimator_version, quotes.snapshot, quotes.customer_name, quotes.customer_company, quotes.customer_email, quotes.idempotency_key, quotes.request_hash, quotes.accepted_at, quotes.cancelled_at, quotes.cancelled_by, quotes.cancel_reason, quotes.created_at, quotes.updated_at, quotes.organisation, quotes.idempotency_scope 
FROM quotes;  -- ()
DROP TABLE quotes;  -- ()
ALTER TABLE _alembic_tmp_quotes RENAME TO quotes;  -- ()
CREATE INDEX ix_quotes_created_at ON quotes (created_at);  -- ()
CREATE INDEX ix_quotes_customer_email ON quotes (customer_email);  -- ()
CREATE INDEX ix_quotes_organisation_created_at ON quotes (organisation, created_at, id);  -- ()
CREATE INDEX ix_quotes_status ON quotes (status);  -- ()
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
	CONSTRAINT ck_webhook_deliveries_status CHECK (status IN ('pending', 'delivered', 'failed', 'held')), 
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
UPDATE alembic_version SET version_num='0017' WHERE alembic_version.version_num = '0015';  -- ()
