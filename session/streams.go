package session

import (
	"context"
	"time"

	"go.uber.org/zap"
)

// SelectMedia picks, among a stream's offers, the media to ask for: what
// fits the audio settings of the call's waiting session, or for a stream
// that opens first, mono external µ-law (else stereo). It returns -1 when
// nothing fits. With Peers, a session this replica does not know of is
// looked up in the store (it may have been created on another replica),
// within selectMediaTimeout; otherwise it does no I/O.
func (m *Manager) SelectMedia(tenantID, callID string, offered []MediaOffer) int {
	m.mu.Lock()
	l := m.byCall[callKey{tenantID, callID}]
	m.mu.Unlock()
	if l != nil {
		return selectMedia(l.settings, offered)
	}
	if m.opts.Peers != nil {
		ctx, cancel := context.WithTimeout(m.ctx, selectMediaTimeout)
		defer cancel()
		if s, err := m.store.LiveSession(ctx, tenantID, callID); err == nil {
			if a, err := m.store.AudioSettings(ctx, tenantID, s.AudioSettingsID); err == nil {
				// StartCall binds it at once, without waiting for the binder.
				m.mu.Lock()
				if len(m.found) >= maxFound {
					clear(m.found) // streams that opened without starting (none in practice)
				}
				m.found[callKey{tenantID, callID}] = found{s, a}
				m.mu.Unlock()
				return selectMedia(a, offered)
			}
		}
	}
	return defaultMedia(offered)
}

// found is a session that SelectMedia read from the store for a stream
// about to start.
type found struct {
	s Session
	a AudioSettings
}

// maxFound bounds Manager.found.
const maxFound = 1024

// selectMediaTimeout bounds the store lookup of SelectMedia: the stream
// waits for its opened message meanwhile.
const selectMediaTimeout = 2 * time.Second

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
	} else if f, ok := m.found[key]; ok {
		m.bindWaitingLocked(f.s, f.a, c) // created on another replica, read by SelectMedia
	} else if m.opts.Peers != nil {
		m.kickBinder() // the session may wait in the store, created elsewhere
	}
	delete(m.found, key)
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
