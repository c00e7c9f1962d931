// Package session owns audio settings and the register and verify sessions
// of the streaming interface: their validation, their state machine
// (spec/voice-api.md section 3, DESIGN.md 2.1) and their persistence through
// the Store interface declared here.
//
// A session starts in PROCESSING_AUDIO and ends in SUCCESS or FAILED; a
// FAILED session carries an error code. The Manager keeps a timer per live
// session so that a session no stream feeds fails with NoAudio after the
// configured timeout, and lets a client cancel a live session.
//
// Several processes (replicas) may share one store. The replica whose
// audio stream feeds a session claims it in the store, so that exactly
// one stream feeds it; replicas tell each other of created, claimed and
// ended sessions through Peers and reconcile through the store every
// second; each writes a lease, and the sessions of a replica whose lease
// expired (or of a process that crashed) fail StreamInterrupted unless a
// stream of their call claims them within a grace period.
package session
