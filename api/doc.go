// Package api serves Earshot's HTTP interfaces on one handler:
//
//   - the streaming interface under /v1, authenticated with an apikey
//     header: audio settings, register and verify sessions, models, and
//     the route of the AudioHook WebSocket (spec/voice-api.md 4.1,
//     DESIGN.md 2.1);
//   - the identity provider under /auth/realms/{tenant} (OAuth 2.0
//     client-credentials and refresh grants, JWKS, discovery) and the
//     tenant-scoped interface under /api/public with Bearer JWTs and
//     multipart/form-data (spec 4.2, 4.3, 5.2; DESIGN.md 2.2);
//   - the management interface under /management/v1: API keys, IP allow
//     lists, OAuth clients, tenants, signing keys and the admin user
//     (spec 5.1, 5.3; DESIGN.md 2.3);
//   - health (/alive, /v1/alive), readiness (/ready) and /metrics;
//
// and the conventions they share (spec 4.5 and 7, DESIGN.md 2.5). Every
// response is JSON (or empty with 204) and carries X-Request-Id. Errors
// are {"code", "message", "errors"?} with a stable code (OAuth errors add
// RFC 6749's error and error_description); bad input names each offending
// field and its allowed values. Request bodies are limited in size and
// unknown JSON fields are ignored, so that clients may send fields of
// later versions (spec section 9).
package api
