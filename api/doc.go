// Package api serves Earshot's HTTP interfaces on one handler:
//
//   - the streaming interface under /v1, authenticated with an apikey
//     header: audio settings, register and verify sessions, models, and
//     the route of the AudioHook WebSocket;
//   - the identity provider under /auth/realms/{tenant} (OAuth 2.0
//     client-credentials and refresh grants, JWKS, discovery) and the
//     tenant-scoped interface under /api/public with Bearer JWTs and
//     multipart/form-data;
//   - the management interface under /management/v1: API keys, IP allow
//     lists, OAuth clients, tenants, signing keys and the admin user
//     (a key manages its own tenant and service, from allow-listed
//     addresses only);
//   - health (/alive, /v1/alive), readiness (/ready) and /metrics;
//
// and the conventions they share (docs in the README). Every
// response is JSON (or empty with 204) and carries X-Request-Id. Errors
// are {"code", "message", "errors"?} with a stable code (OAuth errors add
// RFC 6749's error and error_description); bad input names each offending
// field and its allowed values. Request bodies are limited in size and
// unknown JSON fields are ignored, so that clients may send fields of
// later versions (spec section 9).
package api
