-- Earshot schema version 1: tenants and credentials, audio settings and
-- sessions. Portable SQL: SQLite and PostgreSQL run this file unchanged.

CREATE TABLE tenants (
    id         TEXT PRIMARY KEY,
    created_at BIGINT NOT NULL
);

CREATE TABLE users (
    id            TEXT PRIMARY KEY,
    tenant_id     TEXT NOT NULL REFERENCES tenants (id),
    name          TEXT NOT NULL,
    password_hash TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    UNIQUE (tenant_id, name)
);

CREATE TABLE admin_tokens (
    id         TEXT PRIMARY KEY,
    user_id    TEXT NOT NULL REFERENCES users (id),
    tenant_id  TEXT NOT NULL REFERENCES tenants (id),
    lookup     TEXT NOT NULL UNIQUE,
    digest     BYTEA NOT NULL,
    created_at BIGINT NOT NULL,
    revoked_at BIGINT
);

CREATE TABLE api_keys (
    id               TEXT PRIMARY KEY,
    tenant_id        TEXT NOT NULL REFERENCES tenants (id),
    service          TEXT NOT NULL,
    role             TEXT NOT NULL,
    name             TEXT NOT NULL,
    lookup           TEXT NOT NULL UNIQUE,
    digest           BYTEA NOT NULL,
    audiohook_secret BYTEA,
    created_at       BIGINT NOT NULL,
    revoked_at       BIGINT
);

CREATE TABLE ip_allowlist (
    id         TEXT PRIMARY KEY,
    tenant_id  TEXT NOT NULL REFERENCES tenants (id),
    service    TEXT NOT NULL,
    cidr       TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    UNIQUE (tenant_id, service, cidr)
);

CREATE TABLE oauth_clients (
    id         TEXT PRIMARY KEY,
    tenant_id  TEXT NOT NULL REFERENCES tenants (id),
    digest     BYTEA NOT NULL,
    created_at BIGINT NOT NULL,
    revoked_at BIGINT
);

-- Values sealed with the master key (AES-256-GCM), by name.
CREATE TABLE sealed_secrets (
    name       TEXT PRIMARY KEY,
    value      BYTEA NOT NULL,
    created_at BIGINT NOT NULL
);

CREATE TABLE audio_settings (
    id            TEXT PRIMARY KEY,
    tenant_id     TEXT NOT NULL REFERENCES tenants (id),
    protocol      TEXT NOT NULL,
    format        TEXT NOT NULL,
    codec         TEXT NOT NULL,
    sample_format TEXT NOT NULL,
    sample_rate   INTEGER NOT NULL,
    channels      INTEGER NOT NULL,
    channel       TEXT NOT NULL,
    created_at    BIGINT NOT NULL
);

CREATE TABLE sessions (
    id                     TEXT PRIMARY KEY,
    tenant_id              TEXT NOT NULL REFERENCES tenants (id),
    kind                   TEXT NOT NULL,
    audio_settings_id      TEXT NOT NULL REFERENCES audio_settings (id),
    authenticity_threshold DOUBLE PRECISION NOT NULL,
    audio_total_duration   DOUBLE PRECISION NOT NULL,
    call_id                TEXT NOT NULL,
    model_hash             TEXT NOT NULL,
    state                  TEXT NOT NULL,
    created_at             BIGINT NOT NULL,
    updated_at             BIGINT NOT NULL,
    audio_seconds          DOUBLE PRECISION,
    vad_percentage         DOUBLE PRECISION,
    credential             TEXT,
    authenticity           DOUBLE PRECISION,
    voice_audio_collected  DOUBLE PRECISION,
    error_code             TEXT,
    error_message          TEXT
);

-- At most one live session per call in a tenant (DESIGN.md 2.1: 409).
CREATE UNIQUE INDEX sessions_live_call ON sessions (tenant_id, call_id) WHERE state = 'PROCESSING_AUDIO';
CREATE INDEX sessions_state ON sessions (state);
