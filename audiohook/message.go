package audiohook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Version is the protocol version every message carries.
const Version = "2"

// MaxMessageSize bounds every WebSocket message, text or binary
// (section 2: the reference caps payloads at 64 KiB).
const MaxMessageSize = 64 << 10

// Message types (section 4).
const (
	TypeOpen       = "open"
	TypeOpened     = "opened"
	TypePing       = "ping"
	TypePong       = "pong"
	TypeUpdate     = "update"
	TypePause      = "pause"
	TypePaused     = "paused"
	TypeResume     = "resume"
	TypeResumed    = "resumed"
	TypeDiscarded  = "discarded"
	TypeError      = "error"
	TypeClose      = "close"
	TypeClosed     = "closed"
	TypeDisconnect = "disconnect"
	TypeEvent      = "event"
	TypeReconnect  = "reconnect"
)

// Disconnect reasons.
const (
	ReasonCompleted    = "completed"
	ReasonUnauthorized = "unauthorized"
	ReasonError        = "error"
)

// NullUUID is the conversation id of a connection probe.
const NullUUID = "00000000-0000-0000-0000-000000000000"

// Message is a JSON control message in either direction. ClientSeq is set
// on server messages, ServerSeq and Position on client messages.
type Message struct {
	Version    string          `json:"version"`
	ID         string          `json:"id"`
	Type       string          `json:"type"`
	Seq        int64           `json:"seq"`
	ClientSeq  *int64          `json:"clientseq,omitempty"`
	ServerSeq  *int64          `json:"serverseq,omitempty"`
	Position   string          `json:"position,omitempty"`
	Parameters json.RawMessage `json:"parameters"`
}

// Media is one media format of an open offer or an opened selection.
type Media struct {
	Type     string   `json:"type"`
	Format   string   `json:"format"`
	Channels []string `json:"channels"`
	Rate     int      `json:"rate"`
}

// Equal reports whether m and o are the same media, channels in the same
// order.
func (m Media) Equal(o Media) bool {
	if m.Type != o.Type || m.Format != o.Format || m.Rate != o.Rate || len(m.Channels) != len(o.Channels) {
		return false
	}
	for i := range m.Channels {
		if m.Channels[i] != o.Channels[i] {
			return false
		}
	}
	return true
}

// BytesPerSample is the size of one sample of one channel: 1 for PCMU, 2
// for L16, 0 for a format this server does not know.
func (m Media) BytesPerSample() int {
	switch m.Format {
	case "PCMU":
		return 1
	case "L16":
		return 2
	}
	return 0
}

// Participant is the caller side of a conversation.
type Participant struct {
	ID      string `json:"id"`
	ANI     string `json:"ani"`
	ANIName string `json:"aniName"`
	DNIS    string `json:"dnis"`
}

// OpenParameters are the parameters of open (section 5.1).
type OpenParameters struct {
	OrganizationID     string          `json:"organizationId"`
	ConversationID     string          `json:"conversationId"`
	Participant        Participant     `json:"participant"`
	Media              []Media         `json:"media"`
	Language           string          `json:"language,omitempty"`
	SupportedLanguages bool            `json:"supportedLanguages,omitempty"`
	ContinuedSessions  json.RawMessage `json:"continuedSessions,omitempty"`
	CustomConfig       json.RawMessage `json:"customConfig,omitempty"`
}

// OpenedParameters are the parameters of opened (section 5.2).
type OpenedParameters struct {
	Media       []Media `json:"media"`
	StartPaused bool    `json:"startPaused,omitempty"`
}

// DiscardedParameters are the parameters of discarded and resumed.
type DiscardedParameters struct {
	Start     string `json:"start"`
	Discarded string `json:"discarded"`
}

// ErrorParameters are the parameters of a client error.
type ErrorParameters struct {
	Code       int    `json:"code"`
	Message    string `json:"message"`
	RetryAfter string `json:"retryAfter,omitempty"`
}

// CloseParameters are the parameters of close.
type CloseParameters struct {
	Reason string `json:"reason"`
}

// DisconnectParameters are the parameters of disconnect.
type DisconnectParameters struct {
	Reason string `json:"reason"`
	Info   string `json:"info,omitempty"`
}

var (
	uuidRE     = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[1-5][0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}$`)
	durationRE = regexp.MustCompile(`^PT(\d*\.)?\d+S$`)
)

// ValidUUID reports whether s is an RFC 4122 UUID of versions 1 to 5, or
// the null UUID, as the protocol's validators accept.
func ValidUUID(s string) bool { return s == NullUUID || uuidRE.MatchString(s) }

// ParseDuration parses an ISO 8601 duration of the form PT<seconds>S.
func ParseDuration(s string) (time.Duration, error) {
	if len(s) > 40 || !durationRE.MatchString(s) {
		return 0, fmt.Errorf("audiohook: bad duration %q", s)
	}
	secs, err := strconv.ParseFloat(s[2:len(s)-1], 64)
	if err != nil || secs > 1e9 {
		return 0, fmt.Errorf("audiohook: bad duration %q", s)
	}
	return time.Duration(secs * float64(time.Second)), nil
}

// FormatDuration writes d as PT<seconds>S.
func FormatDuration(d time.Duration) string {
	return "PT" + strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "S"
}

// errEnvelope explains a malformed client message.
type envelopeError struct{ msg string }

func (e *envelopeError) Error() string { return e.msg }

// parseClientMessage decodes and checks the envelope of a client message
// (section 2). Unknown fields are ignored.
func parseClientMessage(data []byte) (Message, error) {
	var raw struct {
		Version    *string         `json:"version"`
		ID         *string         `json:"id"`
		Type       *string         `json:"type"`
		Seq        *int64          `json:"seq"`
		ServerSeq  *int64          `json:"serverseq"`
		Position   *string         `json:"position"`
		Parameters json.RawMessage `json:"parameters"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return Message{}, &envelopeError{"message is not a JSON object"}
	}
	switch {
	case raw.Version == nil || *raw.Version != Version:
		return Message{}, &envelopeError{`missing or unsupported "version"`}
	case raw.ID == nil || !ValidUUID(*raw.ID):
		return Message{}, &envelopeError{`missing or invalid "id"`}
	case raw.Type == nil || *raw.Type == "":
		return Message{}, &envelopeError{`missing "type"`}
	case raw.Seq == nil || *raw.Seq < 1:
		return Message{}, &envelopeError{`missing or invalid "seq"`}
	case raw.ServerSeq == nil || *raw.ServerSeq < 0:
		return Message{}, &envelopeError{`missing or invalid "serverseq"`}
	case raw.Position == nil || !durationRE.MatchString(*raw.Position):
		return Message{}, &envelopeError{`missing or invalid "position"`}
	case !isJSONObject(raw.Parameters):
		return Message{}, &envelopeError{`missing "parameters" object`}
	}
	return Message{Version: *raw.Version, ID: *raw.ID, Type: *raw.Type, Seq: *raw.Seq,
		ServerSeq: raw.ServerSeq, Position: *raw.Position, Parameters: raw.Parameters}, nil
}

func isJSONObject(b json.RawMessage) bool {
	b = bytes.TrimSpace(b)
	return len(b) >= 2 && b[0] == '{'
}

// validateOpen checks open parameters (section 5.1), leniently: unknown
// fields are ignored, and a language is not checked beyond its shape.
func validateOpen(p OpenParameters) error {
	var errs []string
	if !ValidUUID(p.OrganizationID) {
		errs = append(errs, "organizationId")
	}
	if !ValidUUID(p.ConversationID) {
		errs = append(errs, "conversationId")
	}
	if !ValidUUID(p.Participant.ID) {
		errs = append(errs, "participant.id")
	}
	for _, m := range p.Media {
		if m.Type != "audio" || len(m.Channels) == 0 || len(m.Channels) > 2 || m.Rate <= 0 {
			errs = append(errs, "media")
			break
		}
	}
	if len(errs) > 0 {
		return errors.New("open: invalid " + strings.Join(errs, ", "))
	}
	return nil
}
