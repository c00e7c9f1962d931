package auth

import (
	"container/list"
	"net/netip"
	"sync"
	"time"
)

// LimiterOptions configure a Limiter. The zero value works.
type LimiterOptions struct {
	// Burst is how many failures a key may have in quick succession before
	// it is refused. Default 10.
	Burst int
	// Interval is how often one failure is forgiven. Default 6 s, so a key
	// sustains at most 10 failures a minute.
	Interval time.Duration
	// MaxKeys bounds the keys tracked. When it is reached the key touched
	// least recently is forgotten. Default 10000.
	MaxKeys int
	// Now is the clock. Default time.Now.
	Now func() time.Time
}

// Limiter limits failed authentication attempts per key (a client
// address, an API key's lookup, an OAuth client id). It is a token bucket
// per key in its GCRA form: each key holds one instant, the time at which
// its bucket would be full again, so that an entry is a few words whatever
// the rates. Memory is bounded by MaxKeys; an attacker who floods it with
// new keys evicts the oldest entries, which only ever makes the limiter
// more lenient, never blocks anyone else.
//
// A Limiter is safe for concurrent use. Only failures count: successful
// attempts neither consume nor restore allowance.
type Limiter struct {
	burst    int
	interval time.Duration
	maxKeys  int
	now      func() time.Time

	mu      sync.Mutex
	entries map[string]*list.Element // of *limitEntry
	lru     list.List                // front: most recently touched
}

type limitEntry struct {
	key string
	// full is when the key's bucket is full again: each failure moves it
	// one Interval later, starting from now when it is in the past.
	full time.Time
}

// NewLimiter returns a Limiter.
func NewLimiter(opts LimiterOptions) *Limiter {
	if opts.Burst <= 0 {
		opts.Burst = 10
	}
	if opts.Interval <= 0 {
		opts.Interval = 6 * time.Second
	}
	if opts.MaxKeys <= 0 {
		opts.MaxKeys = 10000
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Limiter{burst: opts.Burst, interval: opts.Interval, maxKeys: opts.MaxKeys, now: opts.Now,
		entries: make(map[string]*list.Element)}
}

// Wait returns how long key must wait before its next attempt is heard:
// zero while it has failures left.
func (l *Limiter) Wait(key string) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	el, ok := l.entries[key]
	if !ok {
		return 0
	}
	now := l.now()
	return max(0, l.capped(el.Value.(*limitEntry).full, now).Sub(now)-time.Duration(l.burst-1)*l.interval)
}

// capped bounds a key's instant by what failures could have built up
// since now: Burst intervals ahead. Time read with its monotonic clock
// never goes back, but a clock without one (a wall clock set back, or
// an injected one) can; without the cap, one failure just before the
// clock went back an hour would refuse its key for that hour. With it, a
// key with failures waits one Interval at most after such a jump.
func (l *Limiter) capped(full, now time.Time) time.Time {
	if limit := now.Add(time.Duration(l.burst) * l.interval); full.After(limit) {
		return limit
	}
	return full
}

// Fail records a failed attempt of key.
func (l *Limiter) Fail(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	el, ok := l.entries[key]
	if !ok {
		if l.lru.Len() >= l.maxKeys {
			oldest := l.lru.Back()
			l.lru.Remove(oldest)
			delete(l.entries, oldest.Value.(*limitEntry).key)
		}
		el = l.lru.PushFront(&limitEntry{key: key, full: now})
		l.entries[key] = el
	}
	l.lru.MoveToFront(el)
	e := el.Value.(*limitEntry)
	// Cap the debt at one interval beyond the burst, so that a key that
	// keeps failing while refused waits at most one Interval after it
	// stops.
	full := e.full
	if full.Before(now) {
		full = now
	}
	e.full = l.capped(full.Add(l.interval), now)
}

// Len returns how many keys the limiter tracks.
func (l *Limiter) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lru.Len()
}

// AddrKey is the limiter key of a client address: the address itself for
// IPv4, its /64 network for IPv6, since one IPv6 client usually holds a
// whole /64.
func AddrKey(a netip.Addr) string {
	a = a.Unmap()
	if a.Is6() {
		p, _ := a.Prefix(64)
		return "addr:" + p.String()
	}
	return "addr:" + a.String()
}
