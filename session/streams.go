package session

import (
	"go.uber.org/zap"
)

// SelectMedia picks, among a stream's offers, the media to ask for: what
// fits the audio settings of the call's waiting session, or for a stream
// that opens first, mono external µ-law (else stereo). It returns -1 when
// nothing fits. It does no I/O.
func (m *Manager) SelectMedia(tenantID, callID string, offered []MediaOffer) int {
	m.mu.Lock()
	l := m.byCall[callKey{tenantID, callID}]
	m.mu.Unlock()
	if l != nil {
		return selectMedia(l.settings, offered)
	}
	return defaultMedia(offered)
}

// StartCall registers an opened stream and returns its Call. The caller
// runs Call.Run on its own goroutine and waits for it. A session waiting
// for the call binds at once; one created later binds when it is created.
func (m *Manager) StartCall(spec StreamSpec, ctl Disconnector) (*Call, error) {
	key := callKey{spec.TenantID, spec.CallID}
	c := &Call{m: m, spec: spec, key: key, ctl: ctl, wake: make(chan struct{}, 1),
		log: m.log.With(zap.String("call_id", spec.CallID))}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil, ErrClosed
	}
	if old := m.calls[key]; old != nil {
		m.log.Warn("a second stream for a call: a session bound to the first stays with it; sessions created from now on bind to the second",
			zap.String("call_id", spec.CallID))
	}
	m.calls[key] = c
	if l := m.byCall[key]; l != nil && l.call == nil && !l.finishing {
		l.call = c
		if l.timer != nil {
			l.timer.Stop()
		}
		c.bind(l)
	}
	m.mu.Unlock()
	m.observe().CallsActive(1)
	return c, nil
}

// removeCall forgets a call whose Run returned.
func (m *Manager) removeCall(c *Call) {
	m.mu.Lock()
	if m.calls[c.key] == c {
		delete(m.calls, c.key)
	}
	m.mu.Unlock()
	m.observe().CallsActive(-1)
}
