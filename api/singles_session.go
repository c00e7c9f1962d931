package api

import (
	"context"

	"github.com/earshot-voice/earshot/session"
)

// SessionScorer is the SingleScorer of the service: it runs an upload
// through the same pipeline and speaker models as a live call
// (session.Manager.ScoreRecording).
type SessionScorer struct {
	Sessions *session.Manager
}

// Score implements SingleScorer. A read failure comes back wrapping the
// reader's error, which the handler answers with 413 or 422.
func (s SessionScorer) Score(ctx context.Context, tenantID string, req SingleRequest) (SingleResult, error) {
	f := req.Audio.Format()
	voice := 0
	if req.Channel == session.ChannelInternal {
		voice = 1
	}
	res, err := s.Sessions.ScoreRecording(ctx, tenantID, session.Recording{
		Read: req.Audio.Read, SampleRate: f.SampleRate, Channels: f.Channels, Voice: voice,
		ModelHash: req.ModelHash, Credential: req.Credential,
	})
	if err != nil {
		return SingleResult{}, err
	}
	return SingleResult{Credential: res.Credential, Authenticity: res.Authenticity, AudioSeconds: res.AudioSeconds,
		VoiceAudioCollected: res.VoiceAudioCollected, ModelHash: req.ModelHash, Score: res.Score, Decision: string(res.Decision)}, nil
}
