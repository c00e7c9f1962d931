package session

import (
	"errors"
	"fmt"

	"github.com/earshot-voice/earshot/pipeline"
	"github.com/earshot-voice/earshot/voiceprint"
)

// collector is the speaker side of a bound session: it takes the
// pipeline's hops and features and decides the session's outcome.
type collector interface {
	pipeline.Sink
	// VADPercentage is the voiced share of the hops it has seen.
	VADPercentage() float64
	// Finish computes the outcome of the collection: a result, or a
	// failure.
	Finish(s Session, p Progress) (*Result, *Failure)
}

// errNoSealer means register sessions cannot seal credentials.
var errNoSealer = errors.New("session: no credential sealer configured")

// newCollector prepares the speaker model of a session: an enroller for a
// register session, a verifier of its credential for a verify session.
func (m *Manager) newCollector(l *live) (collector, error) {
	model, ok := m.models.Lookup(l.sess.ModelHash)
	if !ok {
		return nil, fmt.Errorf("session: model %s is not built in", l.sess.ModelHash)
	}
	if m.opts.Sealer == nil {
		return nil, errNoSealer
	}
	base := speaker{model: model, dim: model.Dim}
	if l.sess.Kind == KindRegister {
		e := model.NewEnroller()
		return &enrolment{speaker: base, enr: e, sealer: m.opts.Sealer}, nil
	}
	tmpl, err := m.opts.Sealer.Open(l.sess.TenantID, model, l.sess.Credential)
	if err != nil {
		return nil, fmt.Errorf("session: opening the credential: %w", err)
	}
	v, err := model.NewVerifier(tmpl)
	if err != nil {
		return nil, err
	}
	return &verification{speaker: base, ver: v}, nil
}

// checkCredential explains why a credential cannot be verified against,
// or returns "".
func (m *Manager) checkCredential(tenantID string, model voiceprint.Model, credential string) string {
	if m.opts.Sealer == nil {
		return "cannot be checked: this server has no credential key"
	}
	_, err := m.opts.Sealer.Open(tenantID, model, credential)
	switch {
	case err == nil:
		return ""
	case errors.Is(err, voiceprint.ErrCredentialTenant):
		return "belongs to another tenant"
	case errors.Is(err, voiceprint.ErrCredentialModel):
		return "was made with another model than model_hash"
	case errors.Is(err, voiceprint.ErrCredentialVersion):
		return "was made by an unsupported credential version"
	case errors.Is(err, voiceprint.ErrCredentialTampered):
		return "has been altered, or was sealed by another server"
	}
	return "is not a credential"
}

// errFeatures fails a session whose features did not fit its model: a
// defect, since the pipeline takes the model's feature options.
var errFeatures = &Failure{Code: CodeInternal, Message: "the audio features did not match the speaker model"}

// speaker is what enrolments and verifications share: the model and the
// voice-activity counts of the session's hops.
type speaker struct {
	model         voiceprint.Model
	dim           int
	hops, voiced  int64
	featuresError bool // AddVectors refused a batch
}

func (s *speaker) countHop(voiced bool) {
	s.hops++
	if voiced {
		s.voiced++
	}
}

func (s *speaker) VADPercentage() float64 {
	if s.hops == 0 {
		return 0
	}
	return 100 * float64(s.voiced) / float64(s.hops)
}

// voiceCheck fails a collection with too little voice.
func (s *speaker) voiceCheck(voice float64, p Progress) *Failure {
	if voice >= s.model.MinVoiceSeconds {
		return nil
	}
	return &Failure{Code: CodeNotEnoughVoice, Message: fmt.Sprintf(
		"%.1f s of voice in %.1f s of audio; the model needs %.1f s", voice, p.AudioSeconds, s.model.MinVoiceSeconds)}
}

// authenticityCheck fails a collection below the session's threshold.
func authenticityCheck(a voiceprint.Authenticity, threshold float64) *Failure {
	if a.Score >= threshold {
		return nil
	}
	return &Failure{Code: CodeAuthenticityBelowThreshold, Message: fmt.Sprintf(
		"authenticity %.2f is below the threshold %.2f (consistency %.2f, SNR %.0f dB, clipping %.3f, loop %.2f)",
		a.Score, threshold, a.Consistency, a.SNRdB, a.Clipping, a.Loop)}
}

// enrolment collects a register session's voice into a credential.
type enrolment struct {
	speaker
	enr    *voiceprint.Enroller
	sealer *voiceprint.Sealer
}

func (e *enrolment) Hop(pcm []int16, voiced bool) {
	e.countHop(voiced)
	e.enr.ObservePCM(pcm, voiced)
}

func (e *enrolment) Features(vecs []float32, n int) {
	if e.enr.AddVectors(vecs[:n*e.dim]) != nil {
		e.featuresError = true
	}
}

func (e *enrolment) Finish(s Session, p Progress) (*Result, *Failure) {
	if e.featuresError {
		return nil, errFeatures
	}
	voice := e.enr.VoiceSeconds()
	if f := e.voiceCheck(voice, p); f != nil {
		return nil, f
	}
	auth := e.enr.Authenticity()
	if f := authenticityCheck(auth, s.AuthenticityThreshold); f != nil {
		return nil, f
	}
	tmpl, err := e.enr.Template()
	if err != nil {
		return nil, &Failure{Code: CodeInternal, Message: "the speaker template could not be made"}
	}
	cred, err := e.sealer.Seal(s.TenantID, tmpl)
	if err != nil {
		return nil, &Failure{Code: CodeInternal, Message: "the credential could not be sealed"}
	}
	return &Result{Credential: cred, Authenticity: auth.Score, VoiceAudioCollected: voice}, nil
}

// verification scores a verify session's voice against its credential.
type verification struct {
	speaker
	ver *voiceprint.Verifier
}

func (v *verification) Hop(pcm []int16, voiced bool) {
	v.countHop(voiced)
	v.ver.ObservePCM(pcm, voiced)
}

func (v *verification) Features(vecs []float32, n int) {
	if v.ver.AddVectors(vecs[:n*v.dim]) != nil {
		v.featuresError = true
	}
}

func (v *verification) Finish(s Session, p Progress) (*Result, *Failure) {
	if v.featuresError {
		return nil, errFeatures
	}
	voice := v.ver.VoiceSeconds()
	if f := v.voiceCheck(voice, p); f != nil {
		return nil, f
	}
	r := v.ver.Result()
	if f := authenticityCheck(r.Authenticity, s.AuthenticityThreshold); f != nil {
		return nil, f
	}
	threshold := v.model.DefaultSimilarityThreshold
	if s.SimilarityThreshold != nil {
		threshold = *s.SimilarityThreshold
	}
	decision := DecisionNoMatch
	if r.Score >= threshold {
		decision = DecisionMatch
	}
	score := r.Score
	return &Result{Authenticity: r.Authenticity.Score, VoiceAudioCollected: voice, Score: &score, Decision: decision}, nil
}
