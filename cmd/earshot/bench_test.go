package main

import (
	"context"
	"encoding/base64"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.uber.org/zap"

	"github.com/earshot-voice/earshot/audiohook"
	"github.com/earshot-voice/earshot/auth"
	"github.com/earshot-voice/earshot/session"
	"github.com/earshot-voice/earshot/store"
	"github.com/earshot-voice/earshot/voiceprint"
)

// BenchmarkFramePath measures one call's frame path from WebSocket message
// to progress update: the AudioHook reader, the adapter, the call's queue
// and goroutine, decode, VAD, MFCC and the speaker model's accumulation,
// with a register session bound. Each op is one 200 ms mono µ-law frame
// of speech, sent by a client on loopback; the clock stops when the
// session's progress shows every frame processed. allocs/op counts the
// whole process, client writes included.
func BenchmarkFramePath(b *testing.B) {
	ctx := context.Background()
	st, err := store.Open(ctx, "", b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	mk, _, _ := auth.LoadOrCreateMasterKey("", b.TempDir()+"/master.key")
	creds, err := auth.Bootstrap(ctx, st, mk, zap.NewNop())
	if err != nil {
		b.Fatal(err)
	}
	sealer, _ := voiceprint.NewSealerAEAD(mk.NewAEAD("credential seal v1"))
	models := voiceprint.NewRegistry()
	var processed frameCounter
	sessions := session.NewManager(st, models, session.Options{Sealer: sealer, MaxAudioTotalDuration: 3600,
		Observer: &processed}, zap.NewNop())
	defer sessions.Close()
	keys := auth.NewKeys(st, mk)
	hook := audiohook.NewHandler(audiohook.Options{Authenticator: hookAuth{keys}, Consumer: hookConsumer{sessions}})
	srv := httptest.NewServer(hook)
	defer srv.Close()
	defer hook.Shutdown(ctx)

	settings, err := sessions.CreateAudioSettings(ctx, auth.DefaultTenant, session.AudioSettings{
		Protocol: "audiohook", Format: "raw", Codec: "mulaw", SampleRate: 8000, Channels: 1})
	if err != nil {
		b.Fatal(err)
	}
	callID := uuid.NewString()
	_, err = sessions.Create(ctx, auth.DefaultTenant, session.KindRegister, session.Request{
		AudioSettingsID: settings.ID, AuthenticityThreshold: 0.5, AudioTotalDuration: 3600, CallID: callID,
		ModelHash: models.Models()[0].Hash})
	if err != nil {
		b.Fatal(err)
	}
	secret, _ := base64.StdEncoding.DecodeString(creds.AudioHookClientSecret)
	c, _, err := audiohook.Dial(ctx, audiohook.ClientOptions{URL: "ws" + strings.TrimPrefix(srv.URL, "http"),
		APIKey: creds.APIKey, Secret: secret, OrganizationID: orgID})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Drop()
	if _, _, err := c.Open(ctx, audiohook.OpenParameters{OrganizationID: orgID, ConversationID: callID,
		Participant: audiohook.Participant{ID: uuid.NewString()},
		Media:       []audiohook.Media{{Type: "audio", Format: "PCMU", Channels: []string{"external"}, Rate: 8000}}}); err != nil {
		b.Fatal(err)
	}
	audio := fixture(&testing.T{}, "enrol-s01.wav")
	frames := make([][]byte, 0, len(audio)/1600)
	for i := 0; i+1600 <= len(audio); i += 1600 {
		frames = append(frames, audio[i:i+1600])
	}
	// Pace the sender a little ahead of the server so that the bounded
	// queue never overflows: the benchmark measures processing, not drops.
	// The session's observer counts frames after their progress update.
	waitFor := func(frames int) {
		for processed.n.Load() < int64(frames) {
			time.Sleep(20 * time.Microsecond)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	sent := 0
	for b.Loop() {
		if err := c.SendAudio(ctx, frames[sent%len(frames)]); err != nil {
			b.Fatal(err)
		}
		sent++
		if sent%16 == 0 {
			waitFor(sent - 8)
		}
	}
	waitFor(sent)
	b.StopTimer()
	if dropped := processed.dropped.Load(); dropped > 0 {
		b.Fatalf("%d frames dropped: the benchmark must measure processing, not overload", dropped)
	}
	b.ReportMetric(float64(sent)*0.2/b.Elapsed().Seconds(), "x_realtime")
}

// frameCounter is a session.Observer that counts processed frames.
type frameCounter struct{ n, dropped atomic.Int64 }

func (f *frameCounter) SessionEntered(string, string, string) {}
func (f *frameCounter) CallsActive(int)                       {}
func (f *frameCounter) FrameProcessed(time.Duration)          { f.n.Add(1) }
func (f *frameCounter) FrameDropped(string)                   { f.dropped.Add(1) }
func (f *frameCounter) SessionsActive(string, int)            {}
func (f *frameCounter) StoreCall(string, time.Duration, bool) {}
func (f *frameCounter) BreakerState(int)                      {}
func (f *frameCounter) LeasesExpired(int)                     {}
