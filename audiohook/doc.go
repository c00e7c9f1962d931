// Package audiohook implements the server side of the Genesys Cloud
// AudioHook protocol, the WebSocket on which
// contact-centre platforms stream live call audio to Earshot, and a client
// of it for tests and load tests.
//
// A Handler authenticates each upgrade (an API key, and an HTTP message
// signature, HMAC-SHA256 over RFC 8941 structured fields, when the key has
// a client secret: section 1), answers failures with disconnect
// "unauthorized" after a fixed delay, and then runs the session's state
// machine (sections 2 to 8): open and opened with media selection,
// ping/pong, pause/resume, discarded audio, client errors, close/closed,
// server disconnects, the connection probe, and the sequencing rules
// (seq, clientseq, serverseq, id). It is lenient about unknown message
// types and fields and strict about what the protocol fixes.
//
// The connection's goroutine (the one ServeHTTP runs on) owns it: it reads
// every message, answers control messages at once, and hands binary audio
// to the Stream that the Consumer returned, without blocking on it. The
// Stream's Run goroutine is started and waited for by the connection; it
// may end the call with Control.Disconnect. Handler.Shutdown drains: new
// upgrades get 503, every live stream ends (and finalises), every client
// gets disconnect, and Shutdown returns when the connections are gone.
package audiohook
