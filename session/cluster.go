package session

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"go.uber.org/zap"
)

// Peers carries notifications between the replicas that share a store;
// package store implements it with PostgreSQL LISTEN/NOTIFY. Both methods
// must be safe for concurrent use.
type Peers interface {
	// Notify sends payload to every replica, this one included. A
	// notification may be lost; the Manager reconciles through the store.
	Notify(ctx context.Context, payload string) error
	// Listen hands every payload to handle, in order, until ctx is
	// cancelled (then it returns nil) or the connection fails (then it
	// returns the error). connected is called once listening has begun.
	Listen(ctx context.Context, connected func(), handle func(payload string)) error
}

// Event types between replicas.
const (
	eventCreated = "created" // a session was created: a stream of its call may claim it
	eventClaimed = "claimed" // a stream claimed a session: timers elsewhere stop
	eventEnded   = "ended"   // a session ended: the stream feeding it stops
)

// event is what replicas tell each other, as JSON.
type event struct {
	Type    string `json:"e"`
	Replica string `json:"r"`
	Tenant  string `json:"t"`
	Call    string `json:"c"`
	Session string `json:"s"`
}

// tell notifies the other replicas; a lost notification costs at most a
// reconcile interval, so errors are only logged at debug level.
func (m *Manager) tell(ctx context.Context, e event) {
	if m.opts.Peers == nil {
		return
	}
	e.Replica = m.opts.ReplicaID
	b, err := json.Marshal(e)
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	err = m.store.guard("notify", func() error { return m.opts.Peers.Notify(ctx, string(b)) })
	if err != nil {
		m.log.Debug("notification not sent; the reconcile will catch up", zap.String("event", e.Type), zap.Error(err))
	}
}

// maxEventPayload bounds the notifications this Manager reads.
const maxEventPayload = 8000

// notified handles another replica's notification.
func (m *Manager) notified(payload string) {
	if len(payload) > maxEventPayload {
		return
	}
	var e event
	if json.Unmarshal([]byte(payload), &e) != nil || e.Replica == m.opts.ReplicaID {
		return
	}
	switch e.Type {
	case eventCreated:
		m.mu.Lock()
		c := m.calls[callKey{e.Tenant, e.Call}]
		m.mu.Unlock()
		if c != nil {
			m.kickBinder()
		}
	case eventClaimed:
		// Another replica's stream feeds it: this replica's timer for it,
		// if any, has nothing left to do.
		m.mu.Lock()
		l := m.live[e.Session]
		drop := l != nil && l.call == nil && !l.finishing
		m.mu.Unlock()
		if drop {
			m.dropLive(e.Session)
		}
	case eventEnded:
		m.mu.Lock()
		l := m.live[e.Session]
		drop := l != nil && !l.finishing
		m.mu.Unlock()
		if drop {
			m.ended(e.Session)
		}
	}
}

// kickBinder wakes the binder without blocking.
func (m *Manager) kickBinder() {
	select {
	case m.kick <- struct{}{}:
	default:
	}
}

// listener runs Peers.Listen until Close, reconnecting after a second
// when the connection fails. The failure is logged once, not per retry.
func (m *Manager) listener() {
	defer m.wg.Done()
	failing := false
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		err := m.opts.Peers.Listen(m.ctx, func() {
			if failing {
				m.log.Info("listening to the other replicas again")
				failing = false
			}
			m.kickBinder() // notifications may have been missed
		}, m.notified)
		if m.ctx.Err() != nil {
			return
		}
		if !failing {
			m.log.Warn("lost the notifications of the other replicas; reconnecting (sessions still bind through the store)", zap.Error(err))
			failing = true
		}
		t.Reset(time.Second)
		select {
		case <-t.C:
		case <-m.ctx.Done():
			return
		}
	}
}

// binder matches this replica's streams that feed no session with the
// sessions waiting in the store (created on another replica), every
// ReconcileInterval and whenever kicked.
func (m *Manager) binder() {
	defer m.wg.Done()
	t := time.NewTicker(m.opts.ReconcileInterval)
	defer t.Stop()
	settings := map[string]AudioSettings{} // by id; audio settings never change
	for {
		select {
		case <-t.C:
		case <-m.kick:
		case <-m.ctx.Done():
			return
		}
		m.reconcile(m.ctx, settings)
	}
}

// reconcile binds waiting sessions to this replica's unbound streams.
func (m *Manager) reconcile(ctx context.Context, settings map[string]AudioSettings) {
	m.mu.Lock()
	unbound := 0
	for key, c := range m.calls {
		if l := m.byCall[key]; (l == nil || l.call != c) && len(c.spec.Channels) > 0 {
			unbound++
		}
	}
	m.mu.Unlock()
	if unbound == 0 {
		return
	}
	waiting, err := m.store.WaitingSessions(ctx)
	if err != nil {
		m.log.Debug("waiting sessions not read; will retry", zap.Error(err))
		return
	}
	for _, s := range waiting {
		key := callKey{s.TenantID, s.CallID}
		m.mu.Lock()
		c, l := m.calls[key], m.byCall[key]
		m.mu.Unlock()
		if c == nil || (l != nil && l.call != nil) {
			continue
		}
		a, ok := settings[s.AudioSettingsID]
		if !ok {
			if a, err = m.store.AudioSettings(ctx, s.TenantID, s.AudioSettingsID); err != nil {
				continue
			}
			if len(settings) > 10000 {
				clear(settings)
			}
			settings[s.AudioSettingsID] = a
		}
		m.bindWaiting(s, a, c)
	}
}

// bindWaiting binds a session read from the store to call c, unless the
// session or the call changed meanwhile. The call claims it.
func (m *Manager) bindWaiting(s Session, a AudioSettings, c *Call) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.bindWaitingLocked(s, a, c)
}

// bindWaitingLocked is bindWaiting with m.mu held.
func (m *Manager) bindWaitingLocked(s Session, a AudioSettings, c *Call) {
	if m.closed || m.calls[c.key] != c {
		return
	}
	l := m.live[s.ID]
	if l == nil {
		l = &live{id: s.ID, key: c.key, sess: s, settings: a}
		m.live[l.id] = l
	}
	if l.call != nil || l.finishing {
		return
	}
	if old := m.byCall[l.key]; old != nil && old != l && old.call != nil {
		return
	}
	m.byCall[l.key] = l
	if l.timer != nil {
		l.timer.Stop()
	}
	l.call = c
	c.bind(l)
}

// claim takes the claim of l for this replica and tells the others. A
// store that cannot answer leaves the claim pending (the flusher retries).
func (m *Manager) claim(ctx context.Context, l *live) error {
	err := m.store.ClaimSession(ctx, l.sess.TenantID, l.id, m.opts.ReplicaID)
	m.mu.Lock()
	l.claimPending = err != nil && !contractAnswer(err)
	m.mu.Unlock()
	if err == nil {
		m.tell(ctx, event{Type: eventClaimed, Tenant: l.sess.TenantID, Call: l.sess.CallID, Session: l.id})
	}
	return err
}

// contractAnswer reports whether err is one of the store's answers about
// the session (not found, conflict, not active) rather than a failure.
func contractAnswer(err error) bool {
	return errors.Is(err, ErrNotFound) || errors.Is(err, ErrConflict) || errors.Is(err, ErrNotActive)
}

// maintainer writes this replica's lease every LeaseTTL/5 and, while the
// store answers, ends what dead replicas left: their leases are deleted,
// their claims released (the sessions interrupted), and sessions
// interrupted for longer than StreamGrace fail with StreamInterrupted.
//
// With Peers, a replica reaps only once it has reached the store for a
// whole LeaseTTL: after an outage of the database every lease is old, and
// the live replicas need that long to write theirs again.
func (m *Manager) maintainer() {
	defer m.wg.Done()
	t := time.NewTicker(m.opts.LeaseTTL / 5)
	defer t.Stop()
	var reachedSince time.Time // zero while the store does not answer
	lost := false
	for tick := 0; ; tick++ {
		select {
		case <-t.C:
		case <-m.ctx.Done():
			return
		}
		at := now()
		if err := m.store.Heartbeat(m.ctx, m.opts.ReplicaID, at); err != nil {
			if !lost && m.ctx.Err() == nil {
				m.log.Warn("cannot write this replica's lease; the store is unreachable", zap.Error(err))
				lost = true
			}
			reachedSince = time.Time{}
			continue
		}
		if lost {
			m.log.Info("the store answers again")
			lost = false
		}
		if reachedSince.IsZero() {
			reachedSince = at
		}
		if m.opts.Peers != nil && at.Sub(reachedSince) < m.opts.LeaseTTL {
			continue
		}
		m.reap(m.ctx, at, tick%expireEvery == 0)
	}
}

// expireEvery is how many maintainer ticks pass between two sweeps of the
// waiting sessions (expireWaiting): a sweep reads them all, and it only
// catches sessions past the session timeout, minutes old.
const expireEvery = 15

// reap runs one pass of the maintainer's clean-up; sweep adds the sweep
// of sessions that no replica times.
func (m *Manager) reap(ctx context.Context, at time.Time, sweep bool) {
	if m.opts.Peers != nil {
		n, err := m.store.ExpireReplicas(ctx, at.Add(-m.opts.LeaseTTL), m.opts.ReplicaID)
		if err != nil {
			return
		}
		if n > 0 {
			m.observe().LeasesExpired(n)
			m.log.Warn("replicas stopped renewing their leases; their sessions' streams are cut", zap.Int("replicas", n))
		}
		released, err := m.store.ReleaseClaims(ctx, at)
		if err != nil {
			return
		}
		if released > 0 {
			m.log.Info("sessions of dead replicas wait for their calls to reconnect",
				zap.Int("sessions", released), zap.Duration("grace", m.opts.StreamGrace))
		}
	}
	failed, err := m.store.FailInterrupted(ctx, at.Add(-m.opts.StreamGrace), Failure{Code: CodeStreamInterrupted,
		Message: "the audio stream was interrupted (replica or connection lost) and no stream for the call resumed it within " +
			m.opts.StreamGrace.String()}, at)
	if err != nil {
		return
	}
	for _, s := range failed {
		m.observe().SessionEntered(string(s.Kind), string(s.State), string(CodeStreamInterrupted))
		m.log.Info("session failed: stream interrupted", zap.String("session_id", s.ID), zap.String("call_id", s.CallID))
		m.ended(s.ID)
		m.tell(ctx, event{Type: eventEnded, Tenant: s.TenantID, Call: s.CallID, Session: s.ID})
	}
	if m.opts.Peers != nil && sweep {
		m.expireWaiting(ctx, at)
	}
}

// expireWaiting fails, with NoAudio, sessions that waited for a stream
// past the session timeout with no replica timing them (the replica that
// created them died).
func (m *Manager) expireWaiting(ctx context.Context, at time.Time) {
	waiting, err := m.store.WaitingSessions(ctx)
	if err != nil {
		return
	}
	for _, s := range waiting {
		if !s.InterruptedAt.IsZero() || at.Sub(s.CreatedAt) < m.opts.SessionTimeout+m.opts.LeaseTTL {
			continue
		}
		m.mu.Lock()
		timed := m.live[s.ID] != nil
		m.mu.Unlock()
		if timed {
			continue
		}
		final := s
		final.State, final.UpdatedAt = StateFailed, at
		final.Failure = &Failure{Code: CodeNoAudio, Message: "no audio stream arrived for call_id within " + m.opts.SessionTimeout.String()}
		if m.store.UpdateSession(ctx, final) == nil {
			m.observe().SessionEntered(string(s.Kind), string(StateFailed), string(CodeNoAudio))
			m.tell(ctx, event{Type: eventEnded, Tenant: s.TenantID, Call: s.CallID, Session: s.ID})
		}
	}
}
