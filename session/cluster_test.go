package session

import (
	"context"
	"errors"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/earshot-voice/earshot/voiceprint"
)

// TestNoAudioLeavesAClaimedSession: the replica that created a session
// times it; when a stream on another replica has claimed it, the timer
// (whose "claimed" notification was lost) neither fails it nor writes.
func TestNoAudioLeavesAClaimedSession(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		store := newMemStore()
		a := newTestManager(t, store, Options{ReplicaID: "a", SessionTimeout: time.Minute})
		as, _ := a.CreateAudioSettings(ctx, "t1", validSettings())
		s, err := a.Create(ctx, "t1", KindRegister, Request{AudioSettingsID: as.ID, AuthenticityThreshold: 0.5,
			AudioTotalDuration: 10, CallID: "call", ModelHash: a.Models()[0].Hash})
		if err != nil {
			t.Fatal(err)
		}
		if err := store.ClaimSession(ctx, "t1", s.ID, "b"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Minute)
		synctest.Wait()
		got, _ := store.Session(ctx, "t1", s.ID)
		if got.State != StateProcessingAudio || got.Claim != "b" {
			t.Fatalf("a session fed on another replica after the creator's timeout: %+v", got)
		}
		a.mu.Lock()
		n := len(a.live)
		a.mu.Unlock()
		if n != 0 {
			t.Errorf("the creator still times %d sessions", n)
		}
		// Another replica's DELETE: the claim is read and written with.
		if err := a.Cancel(ctx, "t1", KindRegister, s.ID); err != nil {
			t.Fatalf("cancel of a session fed elsewhere: %v", err)
		}
		if got, _ := store.Session(ctx, "t1", s.ID); got.State != StateFailed || got.Failure.Code != CodeCancelled {
			t.Errorf("after the cancel: %+v", got)
		}
	})
}

// TestNotificationsBetweenReplicas: the creator drops its timer on
// "claimed", and the feeding replica forgets a session on "ended".
func TestNotificationsBetweenReplicas(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		store := newMemStore()
		bus := &fakePeers{}
		a := newTestManager(t, store, Options{ReplicaID: "a", Peers: bus, SessionTimeout: time.Hour})
		b := newTestManager(t, store, Options{ReplicaID: "b", Peers: bus, SessionTimeout: time.Hour})
		synctest.Wait() // both listen
		as, _ := a.CreateAudioSettings(ctx, "t1", validSettings())
		s, _ := a.Create(ctx, "t1", KindRegister, Request{AudioSettingsID: as.ID, AuthenticityThreshold: 0.5,
			AudioTotalDuration: 10, CallID: "call", ModelHash: a.Models()[0].Hash})
		// b's stream (a call with no media: its binder leaves it alone)
		// takes it from the store and claims it, as Call.start does.
		c := &Call{m: b, key: callKey{"t1", "call"}, wake: make(chan struct{}, 1)}
		b.mu.Lock()
		b.calls[c.key] = c
		b.mu.Unlock()
		b.bindWaiting(s, as, c)
		b.mu.Lock()
		l := b.live[s.ID]
		b.mu.Unlock()
		if l == nil {
			t.Fatal("b did not take the waiting session")
		}
		if err := b.claim(ctx, l); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		a.mu.Lock()
		_, timed := a.live[s.ID]
		a.mu.Unlock()
		if timed {
			t.Error("a kept timing a session that b's stream claimed")
		}
		if err := a.Cancel(ctx, "t1", KindRegister, s.ID); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		b.mu.Lock()
		_, fed := b.live[s.ID]
		b.mu.Unlock()
		if fed {
			t.Error("b kept feeding a session cancelled on a")
		}
	})
}

// fakePeers delivers every notification to every listener, in order.
type fakePeers struct {
	mu        sync.Mutex
	listeners []chan string
}

func (p *fakePeers) Notify(_ context.Context, payload string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, l := range p.listeners {
		l <- payload
	}
	return nil
}

func (p *fakePeers) Listen(ctx context.Context, connected func(), handle func(string)) error {
	ch := make(chan string, 64)
	p.mu.Lock()
	p.listeners = append(p.listeners, ch)
	p.mu.Unlock()
	connected()
	for {
		select {
		case s := <-ch:
			handle(s)
		case <-ctx.Done():
			return nil
		}
	}
}

// failingStore fails every session read with err, and counts them.
type failingStore struct {
	*memStore
	err   error
	reads *atomic.Int64
}

func (f failingStore) Session(context.Context, string, string) (Session, error) {
	f.reads.Add(1)
	return Session{}, f.err
}

// TestBreaker: a failure to reach the database answers ErrUnavailable at
// once, five in a row open the breaker (the observer sees it), and the
// open breaker refuses without calling the store; contract answers do not
// count.
func TestBreaker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		obs := &breakerEvents{}
		refused := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}
		reads := new(atomic.Int64)
		m := NewManager(failingStore{newMemStore(), refused, reads}, voiceprint.NewRegistry(), Options{Observer: obs}, zaptest.NewLogger(t))
		defer m.Close()
		id := "00000000-0000-4000-8000-000000000000"
		for i := range 5 {
			if _, err := m.Get(t.Context(), "t1", KindRegister, id); !errors.Is(err, ErrUnavailable) || !errors.Is(err, refused) {
				t.Fatalf("read %d with the database unreachable = %v, want ErrUnavailable wrapping the cause", i, err)
			}
		}
		if err := m.StoreAvailable(); !errors.Is(err, ErrUnavailable) {
			t.Errorf("after 5 failures StoreAvailable = %v", err)
		}
		_, err := m.Get(t.Context(), "t1", KindRegister, id)
		if !errors.Is(err, ErrUnavailable) || errors.Is(err, refused) || reads.Load() != 5 {
			t.Errorf("read with the breaker open = %v after %d store reads, want ErrUnavailable without a sixth read", err, reads.Load())
		}
		obs.mu.Lock()
		states, failed := obs.states, obs.failed
		obs.mu.Unlock()
		if !slices.Equal(states, []int{0, 2}) || failed != 6 {
			t.Errorf("observed breaker states %v and %d failed reads, want [0 2] and 6", states, failed)
		}
		// Contract answers are successes.
		m2 := newTestManager(t, failingStore{newMemStore(), ErrNotFound, new(atomic.Int64)}, Options{})
		for range 10 {
			m2.Get(t.Context(), "t1", KindRegister, id)
		}
		if err := m2.StoreAvailable(); err != nil {
			t.Errorf("not-found answers opened the breaker: %v", err)
		}
	})
}

// breakerEvents records the observer's breaker states and failed session
// reads.
type breakerEvents struct {
	events
	mu     sync.Mutex
	states []int
	failed int
}

func (b *breakerEvents) BreakerState(s int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.states = append(b.states, s)
}

func (b *breakerEvents) StoreCall(op string, _ time.Duration, failed bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if op == "session" && failed {
		b.failed++
	}
}

// TestWaitingSessionOfADeadReplica: a session waits for its stream on a
// replica that dies (its timer dies with it); another replica fails it
// NoAudio once it is older than the session timeout.
func TestWaitingSessionOfADeadReplica(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		store := newMemStore()
		bus := &fakePeers{}
		a := NewManager(store, voiceprint.NewRegistry(), Options{ReplicaID: "a", Peers: bus, SessionTimeout: time.Minute}, zaptest.NewLogger(t))
		b := newTestManager(t, store, Options{ReplicaID: "b", Peers: bus, SessionTimeout: time.Minute})
		as, _ := a.CreateAudioSettings(ctx, "t1", validSettings())
		s, err := a.Create(ctx, "t1", KindRegister, Request{AudioSettingsID: as.ID, AuthenticityThreshold: 0.5,
			AudioTotalDuration: 10, CallID: "call", ModelHash: a.Models()[0].Hash})
		if err != nil {
			t.Fatal(err)
		}
		a.mu.Lock()
		for _, l := range a.live {
			l.timer.Stop() // a dies: its timer with it
		}
		a.mu.Unlock()
		a.cancel()
		a.wg.Wait()
		time.Sleep(time.Minute)
		synctest.Wait()
		if got, _ := b.Get(ctx, "t1", KindRegister, s.ID); got.State != StateProcessingAudio {
			t.Fatalf("failed before its timeout: %+v", got)
		}
		time.Sleep(DefaultLeaseTTL + expireEvery*DefaultLeaseTTL/5)
		synctest.Wait()
		got, _ := b.Get(ctx, "t1", KindRegister, s.ID)
		if got.State != StateFailed || got.Failure.Code != CodeNoAudio {
			t.Fatalf("a waiting session whose replica died, past its timeout: %+v; want FAILED NoAudio", got)
		}
	})
}
