package replay

import (
	"sync"
	"sync/atomic"
)

// Call outcomes. Every call that started ends with exactly one.
const (
	// outcomeCompleted: the call streamed its audio and ended with close
	// "end" and closed.
	outcomeCompleted = "completed"
	// outcomeDisconnected: the server ended the call with disconnect
	// "completed", and close/closed followed.
	outcomeDisconnected = "disconnected"
	// outcomeFailed: anything else; the kind says what.
	outcomeFailed = "failed"
	// outcomeCancelled: the run was cancelled while the call lasted.
	outcomeCancelled = "cancelled"
)

// outcome is how one call ended: one of the outcome constants and, for a
// failure, its kind.
type outcome struct {
	result  string
	kind    string
	err     error // for the summary's example of the kind
	counted bool  // the error was counted when it happened
}

func failed(kind string, err error) outcome {
	return outcome{result: outcomeFailed, kind: kind, err: err}
}

// stats are the counters of a run, shared by every call. Counters that
// change per frame are atomics; maps of rare events take a lock.
type stats struct {
	started, active, done                        atomic.Int64
	completed, disconnected, failed, cancelled   atomic.Int64
	framesSent, framesLate, framesPaused, bytes  atomic.Int64
	samplesSent                                  atomic.Int64 // per channel, all calls
	framesPlanned                                atomic.Int64 // of the calls that opened
	progressFrames                               atomic.Int64 // frames handled or given up, for the progress report
	dial, opened, pongRTT, closed, sendLag, poll Histogram

	mu          sync.Mutex
	reasons     map[string]int64 // disconnect reasons, all of them
	failedKinds map[string]int64
	media       map[string]int64 // calls by selected layout
	states      map[string]int64 // sessions by final state
	codes       map[string]int64 // FAILED sessions by error code
	sessions    int64            // sessions created
	errors      map[string]int64
	examples    map[string]string
	errorsTotal atomic.Int64
}

func newStats() *stats {
	return &stats{reasons: map[string]int64{}, failedKinds: map[string]int64{}, media: map[string]int64{},
		states: map[string]int64{}, codes: map[string]int64{}, errors: map[string]int64{}, examples: map[string]string{}}
}

// maxExample bounds the text kept as an example of an error kind.
const maxExample = 300

// addError counts an error of a kind, keeping the first one's text.
func (s *stats) addError(kind string, err error) {
	s.errorsTotal.Add(1)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.errors[kind]++
	if _, ok := s.examples[kind]; !ok && err != nil {
		msg := err.Error()
		if len(msg) > maxExample {
			msg = msg[:maxExample]
		}
		s.examples[kind] = msg
	}
}

// end counts a call's outcome.
func (s *stats) end(o outcome) {
	switch o.result {
	case outcomeCompleted:
		s.completed.Add(1)
	case outcomeDisconnected:
		s.disconnected.Add(1)
	case outcomeCancelled:
		s.cancelled.Add(1)
	default:
		s.failed.Add(1)
		s.mu.Lock()
		s.failedKinds[o.kind]++
		s.mu.Unlock()
	}
}

func (s *stats) count(m map[string]int64, key string) {
	s.mu.Lock()
	m[key]++
	s.mu.Unlock()
}

func (s *stats) copyMap(m map[string]int64) map[string]int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int64, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
