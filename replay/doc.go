// Package replay is Earshot's load generator: it replays recorded calls
// (WAV or raw µ-law, mono or stereo) to an AudioHook server as many
// concurrent calls, the way Genesys Cloud streams them, and reports what
// the server did under that load.
//
// It exists because contact-centre teams load-test with recorded calls
// before they go live, and SREs need to know how many calls one replica
// holds. It drives any AudioHook server: without
// Options.Register it uses nothing but the protocol
// (the client side of AudioHook, nothing more), so the
// same load can be pointed at Earshot and at another server.
//
// Each call is one goroutine that owns its connection: it dials (signing
// the upgrade when a client secret is given, section 1), sends open with
// the offer Genesys makes (stereo PCMU, then external, then internal:
// section 5.1), streams the frames of the media the server selected
// against a monotonic schedule (section 7), pings every 5 s and times the
// pongs (section 9), answers pause and resume, answers a disconnect with
// close and waits for closed (section 6), and ends with close "end". A
// second goroutine per call reads the server's messages, checks their
// sequencing (section 3) and hands events to the owner; the owner starts
// it and waits for it.
//
// A recording is read and encoded once; every call that plays it shares
// the encoded bytes read-only, so memory grows with the files, not with
// the calls. Percentiles come from fixed log-bucket histograms, so a
// run's memory does not grow with its length either.
//
// With Options.Register each call first creates audio settings and a
// register session through the Earshot REST API,
// whose call_id is the conversationId the call opens with, and after the
// call polls the session until it reaches a terminal state.
package replay
