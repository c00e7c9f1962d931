// Package session owns audio settings and the register and verify sessions
// of the streaming interface, and the work that feeds them:
//
//   - sessions: their validation, their state machine (PROCESSING_AUDIO,
//     then SUCCESS or FAILED with an error code) and their persistence
//     through the Store interface declared here, behind a circuit breaker
//     so that a failing database fails requests fast instead of queueing
//     them;
//   - the Manager's timers: a session no stream feeds fails NoAudio after
//     the configured timeout, and a client may cancel a live session;
//   - calls: one goroutine per call leg with a bounded frame queue between
//     the connection's reader and a pipeline.Pipeline, bound to the
//     session whose call id the stream carries;
//   - the speaker side of a bound session (an enrolment or a verification
//     over the pipeline's hops and features) and its result;
//   - uploaded recordings (Manager.ScoreRecording), scored through the same
//     pipeline and speaker model as a live call.
//
// Several processes (replicas) may share one store. The replica whose
// audio stream feeds a session claims it in the store, so that exactly
// one stream feeds it; replicas tell each other of created, claimed and
// ended sessions through Peers and reconcile through the store every
// second; each writes a lease, and the sessions of a replica whose lease
// expired (or of a process that crashed) fail StreamInterrupted unless a
// stream of their call claims them within a grace period.
package session
