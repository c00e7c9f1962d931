package session

import (
	"time"
	"unicode"
)

// Kind tells register sessions from verify sessions.
type Kind string

// Session kinds.
const (
	KindRegister Kind = "register"
	KindVerify   Kind = "verify"
)

// State is a session's place in its lifecycle.
type State string

// States. New states may be added later: clients must accept unknown ones.
const (
	StateProcessingAudio State = "PROCESSING_AUDIO"
	StateSuccess         State = "SUCCESS"
	StateFailed          State = "FAILED"
)

// Terminal reports whether s is an end state.
func (s State) Terminal() bool { return s == StateSuccess || s == StateFailed }

// ErrorCode says why a session FAILED.
type ErrorCode string

// Failure codes.
const (
	CodeNotEnoughVoice             ErrorCode = "NotEnoughVoice"
	CodeAuthenticityBelowThreshold ErrorCode = "AuthenticityBelowThreshold"
	CodeNoAudio                    ErrorCode = "NoAudio"
	CodeAudioFormatMismatch        ErrorCode = "AudioFormatMismatch"
	CodeCancelled                  ErrorCode = "Cancelled"
	CodeInternal                   ErrorCode = "Internal"
	// CodeStreamInterrupted: the stream that fed the session was cut (its
	// replica died, the process restarted, the connection was lost) and
	// no stream for the call resumed it within the grace period.
	CodeStreamInterrupted ErrorCode = "StreamInterrupted"
)

// Failure is the error of a FAILED session.
type Failure struct {
	Code    ErrorCode
	Message string
}

// Progress is what a live session reports while it collects audio.
type Progress struct {
	AudioSeconds  float64
	VADPercentage float64
}

// Result is what a successful session produced: a credential (register),
// or a score and decision (verify).
type Result struct {
	Credential          string
	Authenticity        float64
	VoiceAudioCollected float64
	// Score and Decision are set by verify sessions.
	Score    *float64
	Decision Decision
}

// Decision is a verify session's verdict.
type Decision string

// Decisions.
const (
	DecisionMatch   Decision = "MATCH"
	DecisionNoMatch Decision = "NO_MATCH"
)

// Session is a register or verify session.
type Session struct {
	ID                    string
	TenantID              string
	Kind                  Kind
	AudioSettingsID       string
	AuthenticityThreshold float64
	AudioTotalDuration    float64
	CallID                string
	ModelHash             string
	// Credential is the credential a verify session checks against.
	Credential string
	// SimilarityThreshold is a verify session's MATCH threshold; nil
	// means the model's default.
	SimilarityThreshold *float64
	State               State
	CreatedAt           time.Time
	UpdatedAt           time.Time
	// Progress is nil until the first audio frame was processed.
	Progress *Progress
	// Result is set in state SUCCESS.
	Result *Result
	// Failure is set in state FAILED.
	Failure *Failure
	// Claim is the id of the replica whose audio stream feeds the
	// session, "" while none does. The store takes a claim only where
	// there is none (ClaimSession), so one stream feeds a session.
	Claim string
	// InterruptedAt is when the stream that fed the session was cut; zero
	// if it never was (or a stream claimed the session again since).
	InterruptedAt time.Time
}

// Request holds the client's fields of a new session.
type Request struct {
	AudioSettingsID       string
	AuthenticityThreshold float64
	AudioTotalDuration    float64
	CallID                string
	ModelHash             string
	// Credential (required) and SimilarityThreshold (optional) are fields
	// of verify sessions.
	Credential          string
	SimilarityThreshold *float64
}

// MaxCallIDLength bounds call_id.
const MaxCallIDLength = 128

// validCallID reports whether id is 1 to MaxCallIDLength printable
// characters.
func validCallID(id string) bool {
	n := 0
	for _, r := range id {
		if !unicode.IsPrint(r) || r == unicode.ReplacementChar {
			return false
		}
		n++
	}
	return n >= 1 && n <= MaxCallIDLength
}
