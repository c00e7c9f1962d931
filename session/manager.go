package session

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"time"

	"github.com/google/uuid"
	"go.uber.org/zap"

	"github.com/earshot-voice/earshot/voiceprint"
)

// Observer is told what sessions and calls do; package metrics implements
// it. Every string is from a small fixed set. Methods must not block.
type Observer interface {
	// SessionEntered: a session entered state; code is empty unless state
	// is FAILED.
	SessionEntered(kind, state, code string)
	// CallsActive: the number of live calls changed by delta.
	CallsActive(delta int)
	// FrameProcessed: one frame went through a call's pipeline.
	FrameProcessed(elapsed time.Duration)
	// FrameDropped: a frame was dropped, and why (queue_full, undecodable).
	FrameDropped(reason string)
	// SessionsActive: the number of sessions of kind that a stream of
	// this replica feeds changed by delta.
	SessionsActive(kind string, delta int)
	// StoreCall: one store operation (a fixed name) ran for elapsed, or
	// was refused at once by the open breaker (elapsed 0); failed when it
	// did not succeed (answers of the contract, like not found, succeed).
	StoreCall(op string, elapsed time.Duration, failed bool)
	// BreakerState: the store's circuit breaker is now closed (0),
	// half-open (1) or open (2).
	BreakerState(state int)
	// LeasesExpired: this replica found n other replicas dead.
	LeasesExpired(n int)
}

// Options configure a Manager. The zero value works.
type Options struct {
	// SessionTimeout is how long a session waits for its audio stream
	// before it fails with NoAudio. Default 10 minutes.
	SessionTimeout time.Duration
	// MaxAudioTotalDuration bounds audio_total_duration, in seconds.
	// Default 300.
	MaxAudioTotalDuration float64
	// FlushInterval is how often live progress is written to the store.
	// Default 1 s.
	FlushInterval time.Duration
	// Observer, if not nil, is told of sessions and calls.
	Observer Observer
	// Sealer seals the credentials of register sessions and opens those
	// of verify sessions. Without one, sessions fail with Internal when
	// their audio arrives.
	Sealer *voiceprint.Sealer
	// MaxConcurrentFinals bounds how many calls build their session's
	// result (credential, authenticity, score) at once. A result costs
	// milliseconds of CPU, and sessions of calls that started together
	// end together: unbounded, a burst of them takes every core and the
	// live calls' frames and pongs wait. Default: half the cores
	// (GOMAXPROCS), at least one.
	MaxConcurrentFinals int

	// ReplicaID names this process among the replicas that share the
	// store; claims and leases carry it. Default: a random UUID, so each
	// start is a new replica.
	ReplicaID string
	// Peers, if not nil, says the store is shared with other replicas
	// and carries their notifications: the Manager tells them when it
	// creates, claims or ends a session, hears theirs, and every
	// ReconcileInterval matches its unbound streams with the sessions
	// waiting in the store (a missed notification costs at most that).
	// Nil: this process is the store's only user (the embedded store),
	// and any claim it finds at Resume is from a process that ended.
	Peers Peers
	// ReconcileInterval is how often, with Peers, unbound streams are
	// matched with waiting sessions through the store. Default 1 s.
	ReconcileInterval time.Duration
	// LeaseTTL is how old a replica's heartbeat may be before the others
	// take it for dead and release its claims. Heartbeats are written
	// every LeaseTTL/5. Default 10 s.
	LeaseTTL time.Duration
	// StreamGrace is how long a session whose stream was cut waits for a
	// stream of its call to claim it again before it fails with
	// StreamInterrupted. Default 10 s.
	StreamGrace time.Duration
}

// Defaults of Options.
const (
	DefaultSessionTimeout        = 10 * time.Minute
	DefaultMaxAudioTotalDuration = 300.0
	DefaultFlushInterval         = time.Second
	DefaultReconcileInterval     = time.Second
	DefaultLeaseTTL              = 10 * time.Second
	DefaultStreamGrace           = 10 * time.Second
)

// Manager creates, reads and ends sessions, and binds them to the audio
// streams of their calls. All methods are safe for concurrent use.
// NewManager starts the goroutines that write progress to the store
// (the flusher) and the replica's lease (the maintainer), and with Peers
// the ones that listen to the other replicas and bind their sessions to
// this replica's streams (the listener and the binder); Close stops them
// and every timer, and waits for them.
type Manager struct {
	store  *breakerStore
	models *voiceprint.Registry
	opts   Options
	log    *zap.Logger

	// ctx is cancelled by Close; timers and the flusher use it.
	ctx    context.Context
	cancel context.CancelFunc

	finals chan struct{} // a slot per result being built (MaxConcurrentFinals)

	mu      sync.Mutex
	closed  bool
	live    map[string]*live // by session id
	byCall  map[callKey]*live
	calls   map[callKey]*Call
	pending []pendingFinal // terminal states the store has not taken yet
	wg      sync.WaitGroup // timer callbacks and the background goroutines

	kick  chan struct{}     // wakes the binder (a session or a stream appeared)
	found map[callKey]found // sessions SelectMedia read for streams about to start; guarded by mu
}

// pendingFinal is a terminal state waiting to be written.
type pendingFinal struct {
	l     *live
	final Session
}

// NewManager returns a Manager over store. Call Resume once at start-up to
// take over sessions a previous process left live.
func NewManager(store Store, models *voiceprint.Registry, opts Options, log *zap.Logger) *Manager {
	if opts.SessionTimeout <= 0 {
		opts.SessionTimeout = DefaultSessionTimeout
	}
	if opts.MaxAudioTotalDuration <= 0 {
		opts.MaxAudioTotalDuration = DefaultMaxAudioTotalDuration
	}
	if opts.FlushInterval <= 0 {
		opts.FlushInterval = DefaultFlushInterval
	}
	if opts.Observer == nil {
		opts.Observer = nopObserver{}
	}
	if opts.MaxConcurrentFinals <= 0 {
		opts.MaxConcurrentFinals = max(runtime.GOMAXPROCS(0)/2, 1)
	}
	if opts.ReplicaID == "" {
		opts.ReplicaID = uuid.NewString()
	}
	if opts.ReconcileInterval <= 0 {
		opts.ReconcileInterval = DefaultReconcileInterval
	}
	if opts.LeaseTTL <= 0 {
		opts.LeaseTTL = DefaultLeaseTTL
	}
	if opts.StreamGrace <= 0 {
		opts.StreamGrace = DefaultStreamGrace
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &Manager{
		store: newBreakerStore(store, opts.Observer), models: models, opts: opts, log: log, ctx: ctx, cancel: cancel,
		live: map[string]*live{}, byCall: map[callKey]*live{}, calls: map[callKey]*Call{},
		finals: make(chan struct{}, opts.MaxConcurrentFinals),
		kick:   make(chan struct{}, 1), found: map[callKey]found{},
	}
	m.wg.Add(2)
	go m.flusher()
	go m.maintainer()
	if opts.Peers != nil {
		m.wg.Add(2)
		go m.binder()
		go m.listener()
	}
	return m
}

func (m *Manager) observe() Observer { return m.opts.Observer }

// Models returns the speaker models sessions can use.
func (m *Manager) Models() []voiceprint.Model { return m.models.Models() }

// Resume takes over the live sessions in the store at start-up. A session
// that waits for its stream waits again with the time it has left (one
// past its deadline fails at once). A session whose stream was cut (its
// claim belongs to a process that is gone: audio streams do not survive a
// restart) keeps its progress and waits StreamGrace for its call to
// reconnect, then fails with StreamInterrupted. Without Peers every other
// claim is from a process that ended and is released at once; with Peers,
// a claim is released when its replica's lease expires.
func (m *Manager) Resume(ctx context.Context) error {
	if err := m.store.Heartbeat(ctx, m.opts.ReplicaID, now()); err != nil {
		return fmt.Errorf("session: writing this replica's lease: %w", err)
	}
	if m.opts.Peers == nil {
		if _, err := m.store.ExpireReplicas(ctx, now().Add(time.Hour), m.opts.ReplicaID); err != nil {
			return fmt.Errorf("session: clearing leases of earlier runs: %w", err)
		}
		n, err := m.store.ReleaseClaims(ctx, now())
		if err != nil {
			return fmt.Errorf("session: releasing the claims of earlier runs: %w", err)
		}
		if n > 0 {
			m.log.Info("sessions whose stream was cut by the restart wait for their calls to reconnect",
				zap.Int("sessions", n), zap.Duration("grace", m.opts.StreamGrace))
		}
	}
	sessions, err := m.store.ActiveSessions(ctx)
	if err != nil {
		return fmt.Errorf("session: resuming live sessions: %w", err)
	}
	resumed := 0
	for _, s := range sessions {
		interrupted := s.Claim == "" && !s.InterruptedAt.IsZero()
		if s.Claim != "" {
			continue // fed by a stream of a live replica
		}
		settings, err := m.store.AudioSettings(ctx, s.TenantID, s.AudioSettingsID)
		if err != nil {
			return fmt.Errorf("session: resuming session %s: %w", s.ID, err)
		}
		// A session waiting for its stream is timed again; one whose
		// stream was cut waits untimed for its call to reconnect here,
		// and the maintainer fails it after the grace period.
		m.addLive(s, settings, time.Until(s.CreatedAt.Add(m.opts.SessionTimeout)), !interrupted)
		resumed++
	}
	if resumed > 0 {
		m.log.Info("resumed live sessions", zap.Int("sessions", resumed))
	}
	return nil
}

// CreateAudioSettings validates and stores new audio settings of a tenant.
// An invalid request returns a *ValidationError.
func (m *Manager) CreateAudioSettings(ctx context.Context, tenantID string, s AudioSettings) (AudioSettings, error) {
	if err := s.validate(); err != nil {
		return AudioSettings{}, err
	}
	s.ID = uuid.NewString()
	s.TenantID = tenantID
	s.CreatedAt = now()
	if err := m.store.CreateAudioSettings(ctx, s); err != nil {
		return AudioSettings{}, fmt.Errorf("session: storing audio settings: %w", err)
	}
	return s, nil
}

// AudioSettings returns the tenant's audio settings with that id, or
// ErrNotFound.
func (m *Manager) AudioSettings(ctx context.Context, tenantID, id string) (AudioSettings, error) {
	if uuid.Validate(id) != nil {
		return AudioSettings{}, ErrNotFound
	}
	return m.store.AudioSettings(ctx, tenantID, id)
}

// Create validates req and starts a session of that kind in
// PROCESSING_AUDIO. An invalid request returns a *ValidationError; a live
// session for the same call id in the tenant returns ErrConflict. If the
// call's stream is already open here, the session collects from its next
// frame; otherwise it waits for the stream.
func (m *Manager) Create(ctx context.Context, tenantID string, kind Kind, req Request) (Session, error) {
	settings, err := m.validate(ctx, tenantID, kind, req)
	if err != nil {
		return Session{}, err
	}
	t := now()
	s := Session{
		ID: uuid.NewString(), TenantID: tenantID, Kind: kind,
		AudioSettingsID: req.AudioSettingsID, AuthenticityThreshold: req.AuthenticityThreshold,
		AudioTotalDuration: req.AudioTotalDuration, CallID: req.CallID, ModelHash: req.ModelHash,
		Credential: req.Credential, SimilarityThreshold: req.SimilarityThreshold,
		State: StateProcessingAudio, CreatedAt: t, UpdatedAt: t,
	}
	m.mu.Lock()
	closed := m.closed
	m.mu.Unlock()
	if closed {
		return Session{}, ErrClosed
	}
	if err := m.store.CreateSession(ctx, s); err != nil {
		if errors.Is(err, ErrConflict) || errors.Is(err, ErrUnavailable) {
			return Session{}, err
		}
		return Session{}, fmt.Errorf("session: storing session: %w", err)
	}
	m.observe().SessionEntered(string(kind), string(StateProcessingAudio), "")
	m.addLive(s, settings, m.opts.SessionTimeout, true)
	m.tell(ctx, event{Type: eventCreated, Tenant: tenantID, Call: s.CallID, Session: s.ID})
	return s, nil
}

func (m *Manager) validate(ctx context.Context, tenantID string, kind Kind, req Request) (AudioSettings, error) {
	var v ValidationError
	if t := req.AuthenticityThreshold; math.IsNaN(t) || t < 0 || t > 1 {
		v.add("authenticity_threshold", "must be between 0 and 1")
	}
	if d := req.AudioTotalDuration; math.IsNaN(d) || d <= 0 || d > m.opts.MaxAudioTotalDuration {
		v.add("audio_total_duration", "must be greater than 0 and at most %g seconds", m.opts.MaxAudioTotalDuration)
	}
	if !validCallID(req.CallID) {
		v.add("call_id", "must be 1 to %d printable characters", MaxCallIDLength)
	}
	model, ok := m.models.Lookup(req.ModelHash)
	if !ok {
		v.add("model_hash", "must be the hash of a model listed by GET /v1/models")
	}
	if t := req.SimilarityThreshold; t != nil && (math.IsNaN(*t) || *t < 0 || *t > 1) {
		v.add("similarity_threshold", "must be between 0 and 1")
	}
	switch {
	case kind == KindVerify && req.Credential == "":
		v.add("credential", "is required")
	case kind == KindVerify && ok:
		if msg := m.checkCredential(tenantID, model, req.Credential); msg != "" {
			v.add("credential", "%s", msg)
		}
	}
	settings, err := m.AudioSettings(ctx, tenantID, req.AudioSettingsID)
	if errors.Is(err, ErrNotFound) {
		v.add("audio_settings_id", "must be the id of audio settings created with this API key's tenant")
	} else if err != nil {
		return AudioSettings{}, fmt.Errorf("session: reading audio settings: %w", err)
	}
	return settings, v.err()
}

// Get returns the tenant's session of that kind and id, or ErrNotFound.
// A session this process is collecting reports its live progress.
func (m *Manager) Get(ctx context.Context, tenantID string, kind Kind, id string) (Session, error) {
	if uuid.Validate(id) != nil {
		return Session{}, ErrNotFound
	}
	s, err := m.store.Session(ctx, tenantID, id)
	if err != nil {
		return Session{}, err
	}
	if s.Kind != kind {
		return Session{}, ErrNotFound
	}
	if s.State == StateProcessingAudio {
		m.mu.Lock()
		l := m.live[id]
		m.mu.Unlock()
		if l != nil {
			if p, _ := l.snapshot(); p != nil {
				s.Progress = p
			}
		}
	}
	return s, nil
}

// Cancel ends the tenant's live session of that kind and id as FAILED with
// code Cancelled, whichever replica's stream feeds it (that replica stops
// collecting). It returns ErrNotFound for an unknown session and
// ErrNotActive for one that already ended.
func (m *Manager) Cancel(ctx context.Context, tenantID string, kind Kind, id string) error {
	for attempt := 0; ; attempt++ {
		s, err := m.Get(ctx, tenantID, kind, id)
		if err != nil {
			return err
		}
		if s.State.Terminal() {
			return ErrNotActive
		}
		s.State, s.Failure, s.UpdatedAt = StateFailed, &Failure{Code: CodeCancelled, Message: "the session was cancelled by the client"}, now()
		err = m.store.UpdateSession(ctx, s)
		if errors.Is(err, ErrConflict) && attempt < 3 {
			continue // a stream claimed it (or lost it) meanwhile: read it again
		}
		if err != nil {
			return err
		}
		m.observe().SessionEntered(string(s.Kind), string(s.State), string(CodeCancelled))
		m.ended(id)
		m.tell(ctx, event{Type: eventEnded, Tenant: tenantID, Call: s.CallID, Session: id})
		return nil
	}
}

// ended forgets a session that ended elsewhere (or was cancelled here),
// stopping the stream that feeds it.
func (m *Manager) ended(id string) {
	if call := m.dropLive(id); call != nil {
		call.unbind(id)
	}
}

// addLive registers a live session, binding it to its call's stream when
// one is open, else arming its NoAudio timer if timed.
func (m *Manager) addLive(s Session, settings AudioSettings, wait time.Duration, timed bool) {
	l := &live{id: s.ID, key: callKey{s.TenantID, s.CallID}, sess: s, settings: settings}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return
	}
	m.live[l.id] = l
	m.byCall[l.key] = l
	if call := m.calls[l.key]; call != nil {
		l.call = call
		call.bind(l)
		return
	}
	if timed {
		l.timer = time.AfterFunc(max(wait, 0), func() { m.noAudio(l) })
	}
}

// dropLive forgets a live session and returns the call it was bound to.
func (m *Manager) dropLive(id string) *Call {
	m.mu.Lock()
	defer m.mu.Unlock()
	l := m.live[id]
	if l == nil {
		return nil
	}
	delete(m.live, id)
	if m.byCall[l.key] == l {
		delete(m.byCall, l.key)
	}
	if l.timer != nil {
		l.timer.Stop()
	}
	return l.call
}

// hasLiveSession reports whether a session still needs the call's stream.
func (m *Manager) hasLiveSession(key callKey) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	l := m.byCall[key]
	return l != nil && !l.finishing
}

// noAudio fails a session whose stream never came. The store is read
// first: a session that a stream of another replica claimed, or whose
// stream was cut (it fails StreamInterrupted instead), is left alone;
// the write names no claim, so a claim taken meanwhile wins.
func (m *Manager) noAudio(l *live) {
	m.mu.Lock()
	if m.closed || m.live[l.id] != l || l.call != nil {
		m.mu.Unlock()
		return
	}
	m.wg.Add(1)
	m.mu.Unlock()
	defer m.wg.Done()
	ctx, cancel := context.WithTimeout(m.ctx, 30*time.Second)
	defer cancel()
	cur, err := m.store.Session(ctx, l.sess.TenantID, l.id)
	switch {
	case errors.Is(err, ErrNotFound):
		m.dropLive(l.id)
		return
	case err == nil && (cur.State != StateProcessingAudio || cur.Claim != "" || !cur.InterruptedAt.IsZero()):
		m.dropLive(l.id)
		return
	}
	// On another error the write below is tried (and retried) anyway.
	msg := fmt.Sprintf("no audio stream arrived for call_id within %s", m.opts.SessionTimeout)
	if m.finish(ctx, l, nil, &Failure{Code: CodeNoAudio, Message: msg}, nil) {
		m.log.Info("session failed: no audio", zap.String("session_id", l.id), zap.String("call_id", l.sess.CallID))
	}
}

// finish writes a live session's terminal state: SUCCESS with res, or
// FAILED with fail. The state is durable before anyone can read it: if the
// store cannot take it now, the flusher retries and the session reads as
// PROCESSING_AUDIO meanwhile. It reports whether the state was written now.
// A session bound to a stream here is written under this replica's claim;
// one no stream feeds (NoAudio) under none.
func (m *Manager) finish(ctx context.Context, l *live, progress *Progress, fail *Failure, res *Result) bool {
	final := l.sess
	final.UpdatedAt = now()
	if progress == nil {
		progress, _ = l.snapshot()
	}
	final.Progress = progress
	if fail != nil {
		final.State, final.Failure = StateFailed, fail
	} else {
		final.State, final.Result = StateSuccess, res
	}
	m.mu.Lock()
	l.finishing = true
	if l.timer != nil {
		l.timer.Stop()
	}
	final.Claim, final.InterruptedAt = "", time.Time{}
	if l.call != nil {
		final.Claim = m.opts.ReplicaID
	}
	m.mu.Unlock()
	err := m.writeFinal(ctx, final)
	switch {
	case err == nil:
		m.finished(ctx, l, final)
		return true
	case errors.Is(err, ErrNotActive), errors.Is(err, ErrNotFound), errors.Is(err, ErrConflict):
		m.dropLive(l.id) // cancelled, ended or claimed elsewhere meanwhile
		return false
	default:
		m.log.Warn("store refused a terminal state; retrying", zap.String("session_id", l.id), zap.Error(err))
		m.mu.Lock()
		m.pending = append(m.pending, pendingFinal{l: l, final: final})
		m.mu.Unlock()
		return false
	}
}

// writeFinal writes a terminal state. When this replica's claim was
// released meanwhile (its lease expired while it could not reach the
// store) but no other stream took the session, it claims it again and
// writes.
func (m *Manager) writeFinal(ctx context.Context, final Session) error {
	err := m.store.UpdateSession(ctx, final)
	if errors.Is(err, ErrConflict) && final.Claim == m.opts.ReplicaID {
		if err := m.store.ClaimSession(ctx, final.TenantID, final.ID, final.Claim); err != nil {
			return err
		}
		err = m.store.UpdateSession(ctx, final)
	}
	return err
}

// finished records a terminal state the store took, and tells the other
// replicas (the one whose timer waits for it stops it).
func (m *Manager) finished(ctx context.Context, l *live, final Session) {
	m.dropLive(l.id)
	code := ""
	if final.Failure != nil {
		code = string(final.Failure.Code)
	}
	m.observe().SessionEntered(string(final.Kind), string(final.State), code)
	m.tell(ctx, event{Type: eventEnded, Tenant: final.TenantID, Call: final.CallID, Session: final.ID})
}

// flusher writes live progress to the store every FlushInterval, and
// retries terminal states the store refused.
func (m *Manager) flusher() {
	defer m.wg.Done()
	t := time.NewTicker(m.opts.FlushInterval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			m.flush(m.ctx)
		case <-m.ctx.Done():
			return
		}
	}
}

// flush writes pending claims and terminal states, then dirty progress,
// once.
func (m *Manager) flush(ctx context.Context) {
	m.mu.Lock()
	pending := m.pending
	m.pending = nil
	dirty := make([]*live, 0, len(m.live))
	var unclaimed []*live
	for _, l := range m.live {
		if l.finishing {
			continue
		}
		dirty = append(dirty, l)
		if l.call != nil && l.claimPending {
			unclaimed = append(unclaimed, l)
		}
	}
	m.mu.Unlock()
	for i, p := range pending {
		err := m.writeFinal(ctx, p.final)
		switch {
		case err == nil:
			m.finished(ctx, p.l, p.final)
		case errors.Is(err, ErrNotActive), errors.Is(err, ErrNotFound), errors.Is(err, ErrConflict):
			m.dropLive(p.l.id)
		default:
			m.mu.Lock()
			m.pending = append(m.pending, pending[i:]...)
			m.mu.Unlock()
			return // the store is down: keep the rest for the next tick
		}
	}
	// Claims of sessions bound while the store was unreachable.
	for _, l := range unclaimed {
		if err := m.claim(ctx, l); err != nil && contractAnswer(err) {
			m.ended(l.id) // another stream won it, or it ended meanwhile
		}
	}
	// Progress of every live session in one write: one transaction per
	// tick instead of one per session (at 2,000 sessions the separate
	// commits were 12 % of the server's CPU).
	var batch []Session
	var written []*live
	var snaps []Progress
	at := now()
	m.mu.Lock()
	for _, l := range dirty {
		if l.claimPending {
			continue // written once the claim is
		}
		p, isDirty := l.snapshot()
		if !isDirty {
			continue
		}
		s := l.sess
		s.Progress, s.UpdatedAt, s.Claim = p, at, ""
		if l.call != nil {
			s.Claim = m.opts.ReplicaID // progress comes from the stream that feeds the session
		}
		batch, written, snaps = append(batch, s), append(written, l), append(snaps, *p)
	}
	m.mu.Unlock()
	if len(batch) == 0 {
		return
	}
	stale, err := m.store.UpdateProgress(ctx, batch)
	if err != nil {
		m.log.Debug("progress not written; will retry", zap.Error(err))
		return
	}
	for i, l := range written {
		l.markClean(snaps[i])
	}
	for _, id := range stale {
		m.mu.Lock()
		l := m.live[id]
		m.mu.Unlock()
		if l == nil {
			continue
		}
		// Ended elsewhere (cancelled on another replica), or this
		// replica's claim was released while it was cut off: claim it
		// again if no other stream took it, else stop feeding it.
		if err := m.claim(ctx, l); err != nil && contractAnswer(err) {
			m.ended(id)
		}
	}
}

// Close stops every timer and background goroutine, writes what is
// pending once more, deletes this replica's lease, and waits. Live
// sessions without a stream stay live in the store; the next process (or
// another replica) resumes them. Close is idempotent.
func (m *Manager) Close() {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return
	}
	m.closed = true
	for _, l := range m.live {
		if l.timer != nil {
			l.timer.Stop()
		}
	}
	m.mu.Unlock()
	m.cancel()
	m.wg.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	m.flush(ctx)
	if err := m.store.RemoveReplica(ctx, m.opts.ReplicaID); err != nil {
		m.log.Debug("this replica's lease was not removed; it expires", zap.Error(err))
	}
}

// now returns the current time at the precision the store keeps.
func now() time.Time { return time.Now().UTC().Truncate(time.Millisecond) }

type nopObserver struct{}

func (nopObserver) SessionEntered(string, string, string) {}
func (nopObserver) CallsActive(int)                       {}
func (nopObserver) FrameProcessed(time.Duration)          {}
func (nopObserver) FrameDropped(string)                   {}
func (nopObserver) SessionsActive(string, int)            {}
func (nopObserver) StoreCall(string, time.Duration, bool) {}
func (nopObserver) BreakerState(int)                      {}
func (nopObserver) LeasesExpired(int)                     {}

// StoreAvailable returns ErrUnavailable while the store's circuit breaker
// is open (the database failed repeatedly), else nil.
func (m *Manager) StoreAvailable() error { return m.store.available() }

// GuardStore runs f, a store operation of another package (reading an API
// key on the REST path), through the sessions' circuit breaker: while it is
// open, f is not run and the answer is ErrUnavailable at once; a failure
// to reach the database is returned as ErrUnavailable wrapping the cause.
// op names the operation in the metrics and must be from a fixed set.
func (m *Manager) GuardStore(op string, f func() error) error { return m.store.guard(op, f) }
