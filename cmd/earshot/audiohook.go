package main

import (
	"context"
	"errors"
	"net/http"
	"net/netip"
	"time"

	"github.com/earshot-voice/earshot/api"
	"github.com/earshot-voice/earshot/audiohook"
	"github.com/earshot-voice/earshot/auth"
	"github.com/earshot-voice/earshot/codec"
	"github.com/earshot-voice/earshot/session"
)

// The adapters below connect the AudioHook protocol to the API keys and to
// the sessions. audiohook declares what it needs in its own terms and
// imports neither auth nor session; these translate, and nothing more.

// hookAuth lets AudioHook upgrades authenticate with streaming API keys.
type hookAuth struct{ keys *auth.Keys }

func (a hookAuth) AuthenticateAudioHook(ctx context.Context, apiKey string) (string, []byte, error) {
	p, secret, err := a.keys.AuthenticateAudioHook(ctx, apiKey)
	switch {
	case errors.Is(err, auth.ErrInvalidCredentials):
		return "", nil, audiohook.ErrUnauthorized
	case err != nil:
		return "", nil, err
	case p.Service != auth.ServiceStreaming:
		return "", nil, audiohook.ErrUnauthorized
	}
	return p.TenantID, secret, nil
}

// hookLimiter applies the failed-authentication limits of the other
// interfaces (the same limiters, per client address and per API key) to
// AudioHook upgrades.
type hookLimiter struct {
	addr, key *auth.Limiter
	proxies   []netip.Prefix
}

// keys returns the limiter keys of r's client: its address (none when
// unknown) and the API key it presents (none when malformed).
func (l hookLimiter) keys(r *http.Request) (addr, key string) {
	if a := api.ClientAddr(r, l.proxies); a.IsValid() {
		addr = auth.AddrKey(a)
	}
	return addr, auth.CredentialKey(r.Header.Get("X-Api-Key"))
}

func (l hookLimiter) Wait(r *http.Request) time.Duration {
	addr, key := l.keys(r)
	var wait time.Duration
	if addr != "" {
		wait = l.addr.Wait(addr)
	}
	if key != "" {
		wait = max(wait, l.key.Wait(key))
	}
	return wait
}

func (l hookLimiter) Fail(r *http.Request) {
	addr, key := l.keys(r)
	if addr != "" {
		l.addr.Fail(addr)
	}
	if key != "" {
		l.key.Fail(key)
	}
}

// hookConsumer hands AudioHook streams to the session manager.
type hookConsumer struct{ sessions *session.Manager }

func (h hookConsumer) SelectMedia(tenantID, conversationID string, offered []audiohook.Media) int {
	offers := make([]session.MediaOffer, len(offered))
	for i, m := range offered {
		offers[i] = session.MediaOffer{Format: m.Format, Channels: m.Channels, Rate: m.Rate}
	}
	return h.sessions.SelectMedia(tenantID, conversationID, offers)
}

func (h hookConsumer) StartStream(_ context.Context, info audiohook.StreamInfo, ctl audiohook.Control) (audiohook.Stream, error) {
	spec := session.StreamSpec{TenantID: info.TenantID, CallID: info.ConversationID}
	if info.Media.Format != "" {
		enc, err := codec.ParseEncoding(info.Media.Format)
		if err != nil {
			return nil, err
		}
		spec.Encoding, spec.SampleRate, spec.Channels = enc, info.Media.Rate, info.Media.Channels
	}
	call, err := h.sessions.StartCall(spec, ctl)
	if err != nil {
		return nil, err // not a nil *Call in a non-nil interface
	}
	return call, nil
}
