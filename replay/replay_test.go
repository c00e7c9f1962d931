package replay

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/earshot-voice/earshot/audiohook"
	"github.com/earshot-voice/earshot/codec"
)

const (
	testKey      = "replay-key"
	testPlainKey = "replay-key-unsigned"
	testSecret   = "c2VjcmV0LWJ5dGVzLWZvci10aGUtcmVwbGF5LXRlc3Q=" // base64, as Genesys is given it
)

type fakeAuth struct{}

func (fakeAuth) AuthenticateAudioHook(_ context.Context, key string) (string, []byte, error) {
	switch key {
	case testKey:
		secret, _ := decodeSecret(testSecret)
		return "tenant", secret, nil
	case testPlainKey:
		return "tenant", nil, nil
	}
	return "", nil, audiohook.ErrUnauthorized
}

func decodeSecret(s string) ([]byte, error) {
	o, err := Options{Files: []string{"x"}, APIKey: "k", URL: "ws://h", ClientSecret: s}.resolve()
	return o.secret, err
}

// fakeConsumer is an Earshot-like consumer: it selects media, counts the
// audio of every stream, and ends every disconnectEvery-th stream with
// disconnect "completed" once it has disconnectAfter of audio, as Earshot
// does when a session has what it needs.
type fakeConsumer struct {
	pick            func(offered []audiohook.Media) int
	disconnectEvery int
	disconnectAfter time.Duration

	streams, active, maxActive atomic.Int64
	frames, bytes, samples     atomic.Int64
	disconnects                atomic.Int64
	streaming                  chan struct{} // when not nil, told of each stream's first frame
}

func (f *fakeConsumer) SelectMedia(_, _ string, offered []audiohook.Media) int {
	if f.pick != nil {
		return f.pick(offered)
	}
	for i, m := range offered {
		if len(m.Channels) == 1 && m.Channels[0] == "external" {
			return i
		}
	}
	return -1
}

func (f *fakeConsumer) StartStream(_ context.Context, info audiohook.StreamInfo, ctl audiohook.Control) (audiohook.Stream, error) {
	n := f.streams.Add(1)
	a := f.active.Add(1)
	for m := f.maxActive.Load(); a > m && !f.maxActive.CompareAndSwap(m, a); m = f.maxActive.Load() {
	}
	s := &fakeStream{f: f, ctl: ctl, channels: max(len(info.Media.Channels), 1), ended: make(chan struct{}), enough: make(chan struct{})}
	if f.disconnectEvery > 0 && n%int64(f.disconnectEvery) == 0 {
		s.limit = int64(f.disconnectAfter * 8000 / time.Second)
	}
	return s, nil
}

type fakeStream struct {
	f        *fakeConsumer
	ctl      audiohook.Control
	channels int
	limit    int64 // samples after which to disconnect; 0 never
	samples  int64 // reader goroutine only
	once     sync.Once
	enough   chan struct{}
	endOnce  sync.Once
	ended    chan struct{}
}

func (s *fakeStream) Run(ctx context.Context) {
	defer s.f.active.Add(-1)
	select {
	case <-s.enough:
		s.f.disconnects.Add(1)
		s.ctl.Disconnect(audiohook.ReasonCompleted, "enough audio")
		<-s.ended
	case <-s.ended:
	case <-ctx.Done():
	}
}

func (s *fakeStream) Audio(frame []byte) {
	s.f.frames.Add(1)
	s.f.bytes.Add(int64(len(frame)))
	n := int64(len(frame) / s.channels)
	if s.samples == 0 && s.f.streaming != nil {
		s.f.streaming <- struct{}{}
	}
	s.f.samples.Add(n)
	s.samples += n
	if s.limit > 0 && s.samples >= s.limit {
		s.once.Do(func() { close(s.enough) })
	}
}
func (s *fakeStream) Discarded(time.Duration) {}
func (s *fakeStream) Pause(bool)              {}
func (s *fakeStream) End(string)              { s.endOnce.Do(func() { close(s.ended) }) }

// fakeObserver counts what the server's connections report.
type fakeObserver struct {
	mu         sync.Mutex
	frames     int64
	bytes      int64
	pongs      int64
	opened     int64
	violations map[string]int
	authFailed map[string]int
	ended      map[string]int
}

func newFakeObserver() *fakeObserver {
	return &fakeObserver{violations: map[string]int{}, authFailed: map[string]int{}, ended: map[string]int{}}
}
func (o *fakeObserver) AudioHookStarted() {}
func (o *fakeObserver) AudioHookOpened(time.Duration, bool) {
	o.mu.Lock()
	o.opened++
	o.mu.Unlock()
}
func (o *fakeObserver) AudioHookEnded(r string) { o.mu.Lock(); o.ended[r]++; o.mu.Unlock() }
func (o *fakeObserver) AudioHookFrame(n int) {
	o.mu.Lock()
	o.frames++
	o.bytes += int64(n)
	o.mu.Unlock()
}
func (o *fakeObserver) AudioHookPong() { o.mu.Lock(); o.pongs++; o.mu.Unlock() }
func (o *fakeObserver) AudioHookViolation(kind string) {
	o.mu.Lock()
	o.violations[kind]++
	o.mu.Unlock()
}
func (o *fakeObserver) AudioHookAuthFailed(r string) { o.mu.Lock(); o.authFailed[r]++; o.mu.Unlock() }

// hookServer is an audiohook.Handler on httptest.
type hookServer struct {
	url string
	h   *audiohook.Handler
	obs *fakeObserver
}

func newHookServer(t *testing.T, consumer *fakeConsumer) *hookServer {
	t.Helper()
	obs := newFakeObserver()
	h := audiohook.NewHandler(audiohook.Options{Authenticator: fakeAuth{}, Consumer: consumer, Observer: obs,
		Logger: zaptest.NewLogger(t), AuthFailureDelay: 10 * time.Millisecond, CloseTimeout: 2 * time.Second})
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		h.Shutdown(context.Background())
		srv.Close()
	})
	return &hookServer{url: "ws" + strings.TrimPrefix(srv.URL, "http") + "/v1/audiohook", h: h, obs: obs}
}

// observed waits until every connection has ended (the client ends a call
// before the server's handler has returned) and locks the observer; call
// the returned function to unlock it.
func (s *hookServer) observed(t *testing.T) (*fakeObserver, func()) {
	t.Helper()
	if err := s.h.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	s.obs.mu.Lock()
	return s.obs, s.obs.mu.Unlock
}

// TestReplayAgainstHandler replays calls against the AudioHook handler
// with an Earshot-like consumer, and checks the summary against what the
// server saw.
func TestReplayAgainstHandler(t *testing.T) {
	dir := t.TempDir()
	mono := writeWAV(t, dir, "mono.wav", codec.Format{Encoding: codec.L16, SampleRate: 8000, Channels: 1}, tone(3*8000+123, 8000, 440, 6000))
	stereo := writeWAV(t, dir, "stereo.wav", codec.Format{Encoding: codec.MuLaw, SampleRate: 8000, Channels: 2},
		interleave2(tone(2*8000, 8000, 300, 6000), tone(2*8000, 8000, 700, 3000)))
	stereoPick := func(offered []audiohook.Media) int {
		for i, m := range offered {
			if len(m.Channels) == 2 {
				return i
			}
		}
		return -1
	}
	short := writeWAV(t, dir, "short.wav", codec.Format{Encoding: codec.L16, SampleRate: 8000, Channels: 1}, tone(1600*8, 8000, 440, 6000))
	tests := []struct {
		name     string
		consumer *fakeConsumer
		opts     Options
		// expectations
		completed, disconnected int64
		channels                int
		media                   string
	}{
		{name: "signed mono calls, the server disconnecting when the audio ends",
			consumer:  &fakeConsumer{disconnectEvery: 1, disconnectAfter: 3*time.Second + 123*time.Second/8000},
			opts:      Options{APIKey: testKey, ClientSecret: testSecret, Files: []string{mono}, Calls: 8},
			completed: 8, channels: 1, media: "external"},
		// In real time the server's disconnect reaches the client well
		// before its next frame is due (200 ms later).
		{name: "real time, the server disconnecting every other call half way",
			consumer:  &fakeConsumer{disconnectEvery: 2, disconnectAfter: 600 * time.Millisecond},
			opts:      Options{APIKey: testKey, ClientSecret: testSecret, Files: []string{short}, Calls: 4, Speed: 1},
			completed: 2, disconnected: 2, channels: 1, media: "external"},
		{name: "unsigned stereo calls, two at a time, stereo files and a mono one",
			consumer:  &fakeConsumer{pick: stereoPick},
			opts:      Options{APIKey: testPlainKey, Files: []string{stereo, mono}, Calls: 6, Concurrency: 2, Rate: 1000},
			completed: 6, channels: 2, media: "external+internal"},
		{name: "no media selected",
			consumer:  &fakeConsumer{pick: func([]audiohook.Media) int { return -1 }},
			opts:      Options{APIKey: testKey, ClientSecret: testSecret, Files: []string{mono}, Calls: 3},
			completed: 3, media: "none"},
		{name: "20 ms frames, capped at 1.5 s",
			consumer:  &fakeConsumer{},
			opts:      Options{APIKey: testKey, ClientSecret: testSecret, Files: []string{mono}, Calls: 4, FrameDuration: 20 * time.Millisecond, Duration: 1500 * time.Millisecond},
			completed: 4, channels: 1, media: "external"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newHookServer(t, tt.consumer)
			tt.opts.URL = srv.url
			r, err := New(tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			s, err := r.Run(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			calls := int64(tt.opts.Calls)
			if s.Calls.Total != calls || s.Calls.Completed != tt.completed || s.Calls.Disconnected != tt.disconnected ||
				s.Calls.Failed != 0 || s.Calls.Cancelled != 0 {
				t.Fatalf("calls %+v, want %d completed and %d disconnected", s.Calls, tt.completed, tt.disconnected)
			}
			if s.Calls.ByMedia[tt.media] != calls || len(s.Calls.ByMedia) != 1 {
				t.Errorf("media %v, want all %s", s.Calls.ByMedia, tt.media)
			}
			// A disconnect that crosses the client's close is counted
			// but does not change the call's outcome.
			if got := s.Calls.DisconnectReasons["completed"]; got < tt.disconnected || got > tt.consumer.disconnects.Load() {
				t.Errorf("disconnects: summary %v, server %d", s.Calls.DisconnectReasons, tt.consumer.disconnects.Load())
			}
			if s.Errors.Total != 0 || len(s.Problems()) != 0 {
				t.Errorf("errors %+v, problems %v", s.Errors, s.Problems())
			}
			obs, unlock := srv.observed(t)
			defer unlock()
			// Every frame sent reached the server, and nothing else.
			if s.Frames.Sent != obs.frames || s.Frames.Bytes != obs.bytes {
				t.Errorf("sent %d frames, %d bytes; the server received %d, %d", s.Frames.Sent, s.Frames.Bytes, obs.frames, obs.bytes)
			}
			if len(obs.violations) != 0 || len(obs.authFailed) != 0 {
				t.Errorf("the server saw violations %v, auth failures %v", obs.violations, obs.authFailed)
			}
			if obs.opened != calls || s.OpenedMS.Count != uint64(calls) || s.DialMS.Count != uint64(calls) {
				t.Errorf("opened: server %d, summary %d", obs.opened, s.OpenedMS.Count)
			}
			if s.ClosedMS.Count != uint64(calls) {
				t.Errorf("%d closed of %d calls", s.ClosedMS.Count, calls)
			}
			if tt.channels > 0 && s.Frames.Bytes != int64(tt.channels)*int64(s.Frames.AudioSeconds*8000+0.5) {
				t.Errorf("%d bytes for %.3f s of %d-channel audio", s.Frames.Bytes, s.Frames.AudioSeconds, tt.channels)
			}
			// Calls that ran to the end sent all their audio, and the
			// streams got it.
			if tt.disconnected == 0 {
				if s.Frames.Sent != s.Frames.Planned && tt.media != "none" {
					t.Errorf("sent %d of %d frames", s.Frames.Sent, s.Frames.Planned)
				}
				if got := tt.consumer.samples.Load(); got != int64(s.Frames.AudioSeconds*8000+0.5) {
					t.Errorf("the streams got %d samples, the summary says %.3f s", got, s.Frames.AudioSeconds)
				}
			}
			if tt.opts.Speed == 0 && (s.Frames.Late != 0 || s.SendLagMS.Count != 0) {
				t.Errorf("at speed 0: %d late frames, %d lag samples", s.Frames.Late, s.SendLagMS.Count)
			}
			if tt.opts.Concurrency > 0 && tt.consumer.maxActive.Load() > int64(tt.opts.Concurrency) {
				t.Errorf("%d streams at once, concurrency %d", tt.consumer.maxActive.Load(), tt.opts.Concurrency)
			}
			if obs.ended["end"]+obs.ended["disconnect"] != int(calls) || obs.ended["disconnect"] != int(tt.disconnected) {
				t.Errorf("server end reasons %v", obs.ended)
			}
		})
	}
}

// TestReplayPings streams in real time with short frames and a short
// ping cadence: every ping gets its pong, timed.
func TestReplayPings(t *testing.T) {
	dir := t.TempDir()
	mono := writeWAV(t, dir, "mono.wav", codec.Format{Encoding: codec.L16, SampleRate: 8000, Channels: 1}, tone(4000, 8000, 440, 6000))
	srv := newHookServer(t, &fakeConsumer{})
	r, err := New(Options{URL: srv.url, APIKey: testKey, ClientSecret: testSecret, Files: []string{mono}, Calls: 2,
		Speed: 1, FrameDuration: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	r.timing.firstPing, r.timing.ping = 5*time.Millisecond, 50*time.Millisecond
	s, err := r.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if s.Calls.Completed != 2 || s.Errors.Total != 0 {
		t.Fatalf("calls %+v errors %+v", s.Calls, s.Errors)
	}
	obs, unlock := srv.observed(t)
	pongs := obs.pongs
	unlock()
	// 0.5 s of audio paced in real time: pings at 5 ms and then every
	// 50 ms at least until the last frame.
	if pongs < 2 || s.PongRTTMS.Count != uint64(pongs) {
		t.Errorf("the server sent %d pongs, the summary timed %d", pongs, s.PongRTTMS.Count)
	}
	if s.PongRTTMS.Max <= 0 || s.PongRTTMS.P50 > s.PongRTTMS.Max {
		t.Errorf("pong rtt %+v", s.PongRTTMS)
	}
	if s.SendLagMS.Count != uint64(s.Frames.Sent) {
		t.Errorf("%d lag samples for %d frames", s.SendLagMS.Count, s.Frames.Sent)
	}
}

// TestReplayUnauthorized: a wrong key is refused with disconnect
// "unauthorized" instead of opened; the call answers close and fails.
func TestReplayUnauthorized(t *testing.T) {
	dir := t.TempDir()
	mono := writeWAV(t, dir, "mono.wav", codec.Format{Encoding: codec.L16, SampleRate: 8000, Channels: 1}, tone(800, 8000, 440, 6000))
	srv := newHookServer(t, &fakeConsumer{})
	s, err := Run(t.Context(), Options{URL: srv.url, APIKey: "wrong", Files: []string{mono}, Calls: 2})
	if err != nil {
		t.Fatal(err)
	}
	if s.Calls.Failed != 2 || s.Calls.FailedByKind["disconnect_unauthorized"] != 2 || s.Calls.DisconnectReasons["unauthorized"] != 2 {
		t.Fatalf("calls %+v", s.Calls)
	}
	if s.ClosedMS.Count != 2 || len(s.Problems()) == 0 {
		t.Errorf("closed %d, problems %v", s.ClosedMS.Count, s.Problems())
	}
	obs, unlock := srv.observed(t)
	defer unlock()
	if obs.authFailed["unknown-key"] != 2 || len(obs.violations) != 0 {
		t.Errorf("auth failures %v, violations %v", obs.authFailed, obs.violations)
	}
}

// TestReplayCancelled: cancelling the run ends the live calls with close
// "end" and closed, and starts no more.
func TestReplayCancelled(t *testing.T) {
	dir := t.TempDir()
	long := writeWAV(t, dir, "long.wav", codec.Format{Encoding: codec.L16, SampleRate: 8000, Channels: 1}, tone(60*8000, 8000, 440, 6000))
	consumer := &fakeConsumer{streaming: make(chan struct{}, 2)}
	srv := newHookServer(t, consumer)
	r, err := New(Options{URL: srv.url, APIKey: testKey, ClientSecret: testSecret, Files: []string{long}, Calls: 10, Concurrency: 2, Speed: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan *Summary, 1)
	go func() {
		s, _ := r.Run(ctx)
		done <- s
	}()
	<-consumer.streaming // both calls are streaming
	<-consumer.streaming
	cancel()
	s := <-done
	if s.Calls.Total != 2 || s.Calls.Cancelled != 2 || s.Calls.Failed != 0 || len(s.Problems()) != 0 {
		t.Fatalf("calls %+v, problems %v", s.Calls, s.Problems())
	}
	obs, unlock := srv.observed(t)
	defer unlock()
	if obs.ended["end"] != 2 || s.Frames.Sent != obs.frames {
		t.Errorf("server end reasons %v; frames %d sent, %d received", obs.ended, s.Frames.Sent, obs.frames)
	}
}

// TestSummaryJSON checks the keys the --json file promises.
func TestSummaryJSON(t *testing.T) {
	dir := t.TempDir()
	mono := writeWAV(t, dir, "mono.wav", codec.Format{Encoding: codec.L16, SampleRate: 8000, Channels: 1}, tone(1600, 8000, 440, 6000))
	srv := newHookServer(t, &fakeConsumer{})
	s, err := Run(t.Context(), Options{URL: srv.url, APIKey: testKey, ClientSecret: testSecret, Files: []string{mono}, Calls: 1})
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	json.Unmarshal(data, &m)
	for _, key := range []string{"calls.total", "calls.completed", "sessions.by_state", "opened_ms.p50", "opened_ms.p99",
		"opened_ms.max", "pong_rtt_ms.p50", "pong_rtt_ms.p99", "pong_rtt_ms.max", "frames.sent", "frames.late",
		"errors.total", "errors.by_kind"} {
		var v any = m
		for _, part := range strings.Split(key, ".") {
			obj, ok := v.(map[string]any)
			if !ok {
				v = nil
				break
			}
			v = obj[part]
		}
		if v == nil {
			t.Errorf("no %s in %s", key, data)
		}
	}
	var text strings.Builder
	if err := s.WriteText(&text); err != nil || !strings.Contains(text.String(), "1 completed") {
		t.Errorf("text summary: %v\n%s", err, text.String())
	}
}
