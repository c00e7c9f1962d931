package api

import (
	"net/http"
	"time"

	"github.com/earshot-voice/earshot/auth"
	"github.com/earshot-voice/earshot/session"
)

// audioSettingsJSON is the Audio Settings resource (spec 2.1).
type audioSettingsJSON struct {
	ID            string `json:"id"`
	AudioProtocol string `json:"audio_protocol"`
	AudioFormat   string `json:"audio_format"`
	AudioCodec    string `json:"audio_codec"`
	SampleFormat  string `json:"sample_format"`
	SampleRate    int    `json:"sample_rate"`
	Channels      int    `json:"channels"`
	Channel       string `json:"channel"`
	CreatedAt     string `json:"created_at"`
}

func renderAudioSettings(a session.AudioSettings) audioSettingsJSON {
	return audioSettingsJSON{
		ID: a.ID, AudioProtocol: a.Protocol, AudioFormat: a.Format, AudioCodec: a.Codec, SampleFormat: a.SampleFormat,
		SampleRate: a.SampleRate, Channels: a.Channels, Channel: a.Channel, CreatedAt: httpDate(a.CreatedAt),
	}
}

// sessionJSON is the Register Session resource (spec 2.2).
type sessionJSON struct {
	ID                    string       `json:"id"`
	AudioSettingsID       string       `json:"audio_settings_id"`
	AuthenticityThreshold float64      `json:"authenticity_threshold"`
	AudioTotalDuration    float64      `json:"audio_total_duration"`
	CallID                string       `json:"call_id"`
	ModelHash             string       `json:"model_hash"`
	SimilarityThreshold   *float64     `json:"similarity_threshold,omitempty"`
	CreatedAt             string       `json:"created_at"`
	State                 string       `json:"state"`
	Result                *resultJSON  `json:"result,omitempty"`
	Error                 *failureJSON `json:"error,omitempty"`
}

// resultJSON carries progress while processing and the credential on
// SUCCESS; progress stays in a finished session's result.
type resultJSON struct {
	AudioSeconds        *float64 `json:"audio_seconds,omitempty"`
	VADPercentage       *float64 `json:"vad_percentage,omitempty"`
	Credential          string   `json:"credential,omitempty"`
	Authenticity        *float64 `json:"authenticity,omitempty"`
	VoiceAudioCollected *float64 `json:"voice_audio_collected,omitempty"`
	Score               *float64 `json:"score,omitempty"`
	Decision            string   `json:"decision,omitempty"`
}

type failureJSON struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

func renderSession(s session.Session) sessionJSON {
	out := sessionJSON{
		ID: s.ID, AudioSettingsID: s.AudioSettingsID, AuthenticityThreshold: s.AuthenticityThreshold,
		AudioTotalDuration: s.AudioTotalDuration, CallID: s.CallID, ModelHash: s.ModelHash,
		SimilarityThreshold: s.SimilarityThreshold, CreatedAt: httpDate(s.CreatedAt), State: string(s.State),
	}
	if s.Progress != nil || s.Result != nil {
		out.Result = &resultJSON{}
	}
	if p := s.Progress; p != nil {
		out.Result.AudioSeconds, out.Result.VADPercentage = &p.AudioSeconds, &p.VADPercentage
	}
	if r := s.Result; r != nil {
		out.Result.Credential = r.Credential
		out.Result.Authenticity, out.Result.VoiceAudioCollected = &r.Authenticity, &r.VoiceAudioCollected
		out.Result.Score, out.Result.Decision = r.Score, string(r.Decision)
	}
	if f := s.Failure; f != nil {
		out.Error = &failureJSON{Code: string(f.Code), Message: f.Message}
	}
	return out
}

// httpDate formats t as an HTTP-date (spec 2.1).
func httpDate(t time.Time) string { return t.UTC().Format(http.TimeFormat) }

type modelJSON struct {
	Hash                       string  `json:"hash"`
	Name                       string  `json:"name"`
	SampleRates                []int   `json:"sample_rates"`
	DefaultSimilarityThreshold float64 `json:"default_similarity_threshold"`
	Description                string  `json:"description"`
}

func (s *Server) listModels(w http.ResponseWriter, _ *http.Request, _ auth.Principal) error {
	models := s.opts.Sessions.Models()
	items := make([]modelJSON, len(models))
	for i, m := range models {
		items[i] = modelJSON{Hash: m.Hash, Name: m.Name, SampleRates: m.SampleRates,
			DefaultSimilarityThreshold: m.DefaultSimilarityThreshold, Description: m.Description}
	}
	writeJSON(w, http.StatusOK, map[string]any{"items": items})
	return nil
}

func (s *Server) createAudioSettings(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	o, err := decodeObject(w, r, s.opts.MaxBodyBytes)
	if err != nil {
		return err
	}
	req := session.AudioSettings{
		Protocol:     o.string("audio_protocol"),
		Format:       o.string("audio_format"),
		Codec:        o.string("audio_codec"),
		SampleFormat: o.optionalString("sample_format", ""),
		SampleRate:   o.integer("sample_rate"),
		Channels:     o.integer("channels"),
		Channel:      o.optionalString("channel", session.ChannelExternal),
	}
	if err := o.err(); err != nil {
		return err
	}
	a, err := s.opts.Sessions.CreateAudioSettings(r.Context(), p.TenantID, req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, renderAudioSettings(a))
	return nil
}

func (s *Server) getAudioSettings(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	a, err := s.opts.Sessions.AudioSettings(r.Context(), p.TenantID, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, renderAudioSettings(a))
	return nil
}

func (s *Server) createSession(kind session.Kind) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
		o, err := decodeObject(w, r, s.opts.MaxBodyBytes)
		if err != nil {
			return err
		}
		req := session.Request{
			AudioSettingsID:       o.string("audio_settings_id"),
			AuthenticityThreshold: o.number("authenticity_threshold"),
			AudioTotalDuration:    o.number("audio_total_duration"),
			CallID:                o.string("call_id"),
			ModelHash:             o.string("model_hash"),
		}
		if kind == session.KindVerify {
			req.Credential = o.string("credential")
			req.SimilarityThreshold = o.optionalNumber("similarity_threshold")
		}
		if err := o.err(); err != nil {
			return err
		}
		sess, err := s.opts.Sessions.Create(r.Context(), p.TenantID, kind, req)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusCreated, renderSession(sess))
		return nil
	}
}

func (s *Server) getSession(kind session.Kind) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
		sess, err := s.opts.Sessions.Get(r.Context(), p.TenantID, kind, r.PathValue("id"))
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, renderSession(sess))
		return nil
	}
}

func (s *Server) cancelSession(kind session.Kind) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
		if err := s.opts.Sessions.Cancel(r.Context(), p.TenantID, kind, r.PathValue("id")); err != nil {
			return err
		}
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
}
