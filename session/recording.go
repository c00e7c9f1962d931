package session

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/earshot-voice/earshot/codec"
	"github.com/earshot-voice/earshot/pipeline"
)

// Recording is a whole recording to enrol, and to verify against a
// credential when one is given (POST /api/public/singles).
type Recording struct {
	// Read reads interleaved decoded samples, as codec.WAVReader.Read
	// does, until io.EOF.
	Read       func(dst []int16) (int, error)
	SampleRate int // 8000 or 16000
	Channels   int // 1 or 2
	Voice      int // index of the channel to enrol
	ModelHash  string
	// Credential, when not empty, is verified against.
	Credential string
}

// RecordingResult is what a recording gave.
type RecordingResult struct {
	Credential          string
	Authenticity        float64
	AudioSeconds        float64
	VoiceAudioCollected float64
	// Score and Decision are set when the recording was verified.
	Score    *float64
	Decision Decision
}

// ErrRecording wraps an error of Recording.Read.
var ErrRecording = errors.New("session: reading the recording")

// ScoreRecording runs a recording through the same pipeline and speaker
// model as a live call and returns its credential, and its score against
// rec.Credential when one is given. Input it cannot use returns a
// *ValidationError naming the field (audio, credential, model_hash); a
// failure of rec.Read is returned wrapped in ErrRecording. It is safe for
// concurrent use.
func (m *Manager) ScoreRecording(ctx context.Context, tenantID string, rec Recording) (RecordingResult, error) {
	model, ok := m.models.Lookup(rec.ModelHash)
	if !ok {
		return RecordingResult{}, &ValidationError{Fields: []FieldError{{Field: "model_hash", Message: "must be the hash of a model listed by GET /v1/models"}}}
	}
	if rec.Credential != "" {
		if msg := m.checkCredential(tenantID, model, rec.Credential); msg != "" {
			return RecordingResult{}, &ValidationError{Fields: []FieldError{{Field: "credential", Message: msg}}}
		}
	}
	ref := -1
	if rec.Channels == 2 {
		ref = 1 - rec.Voice
	}
	pipe, err := pipeline.New(pipeline.Options{Encoding: codec.L16, SampleRate: rec.SampleRate, Channels: rec.Channels,
		Voice: rec.Voice, Reference: ref, Features: model.Features})
	if err != nil {
		return RecordingResult{}, &ValidationError{Fields: []FieldError{{Field: "audio", Message: "must be 8 or 16 kHz, mono or stereo"}}}
	}
	sess := Session{TenantID: tenantID, Kind: KindRegister, ModelHash: model.Hash, Credential: rec.Credential}
	enrol, err := m.newCollector(&live{sess: sess})
	if err != nil {
		return RecordingResult{}, err
	}
	sinks := tee{enrol}
	var verify collector
	if rec.Credential != "" {
		sess.Kind = KindVerify
		if verify, err = m.newCollector(&live{sess: sess}); err != nil {
			return RecordingResult{}, err
		}
		sinks = append(sinks, verify)
	}
	pipe.SetSink(sinks)

	samples := make([]int16, 4096*rec.Channels)
	var wire []byte
	for {
		if err := ctx.Err(); err != nil {
			return RecordingResult{}, err
		}
		n, rerr := rec.Read(samples)
		if n > 0 {
			wire = codec.AppendL16Encode(wire[:0], samples[:n])
			if err := pipe.Write(wire); err != nil {
				return RecordingResult{}, fmt.Errorf("%w: %w", ErrRecording, err)
			}
		}
		if errors.Is(rerr, io.EOF) {
			break
		}
		if rerr != nil {
			return RecordingResult{}, fmt.Errorf("%w: %w", ErrRecording, rerr)
		}
	}
	pipe.Flush()
	progress := Progress{AudioSeconds: float64(pipe.Hops()) * pipeline.HopSamples / pipeline.Rate, VADPercentage: enrol.VADPercentage()}
	res, fail := enrol.Finish(sess, progress)
	if fail != nil {
		return RecordingResult{}, recordingFailure(fail)
	}
	out := RecordingResult{Credential: res.Credential, Authenticity: res.Authenticity,
		AudioSeconds: progress.AudioSeconds, VoiceAudioCollected: res.VoiceAudioCollected}
	if verify != nil {
		vres, fail := verify.Finish(sess, progress)
		if fail != nil {
			return RecordingResult{}, recordingFailure(fail)
		}
		out.Score, out.Decision = vres.Score, vres.Decision
	}
	return out, nil
}

// recordingFailure turns a collection's failure into the answer for a
// recording: its audio is what cannot be used.
func recordingFailure(f *Failure) error {
	if f.Code == CodeNotEnoughVoice {
		return &ValidationError{Fields: []FieldError{{Field: "audio", Message: "holds too little voice: " + f.Message}}}
	}
	return fmt.Errorf("session: scoring the recording: %s: %s", f.Code, f.Message)
}

// tee sends what a pipeline finds to several sinks.
type tee []collector

func (t tee) Hop(pcm []int16, voiced bool) {
	for _, s := range t {
		s.Hop(pcm, voiced)
	}
}

func (t tee) Features(vecs []float32, n int) {
	for _, s := range t {
		s.Features(vecs, n)
	}
}
