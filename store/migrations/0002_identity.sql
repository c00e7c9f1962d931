-- Earshot schema version 2: the identity provider (refresh tokens) and the
-- indexes the management interface reads by. Portable SQL: SQLite and
-- PostgreSQL run this file unchanged.

-- One row per link of a refresh-token chain (auth.RefreshToken). A link is
-- used once (used_at), then the next link is issued; a revoked client or a
-- reused link revokes the chain (revoked_at).
CREATE TABLE refresh_tokens (
    id                TEXT PRIMARY KEY,
    tenant_id         TEXT NOT NULL REFERENCES tenants (id),
    client_id         TEXT NOT NULL REFERENCES oauth_clients (id),
    family_id         TEXT NOT NULL,
    lookup            TEXT NOT NULL UNIQUE,
    digest            BYTEA NOT NULL,
    scope             TEXT NOT NULL,
    created_at        BIGINT NOT NULL,
    expires_at        BIGINT NOT NULL,
    family_expires_at BIGINT NOT NULL,
    used_at           BIGINT,
    revoked_at        BIGINT
);

CREATE INDEX refresh_tokens_family ON refresh_tokens (family_id);
CREATE INDEX refresh_tokens_client ON refresh_tokens (client_id);
CREATE INDEX refresh_tokens_expires ON refresh_tokens (expires_at);

CREATE INDEX api_keys_tenant ON api_keys (tenant_id, created_at);
CREATE INDEX oauth_clients_tenant ON oauth_clients (tenant_id, created_at);
CREATE INDEX admin_tokens_user ON admin_tokens (user_id);
