package api

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"regexp"
	"strings"

	"github.com/earshot-voice/earshot/codec"
	"github.com/earshot-voice/earshot/session"
)

// SingleRequest is one recording to turn into a credential, and score
// against Credential when one was sent (POST /api/public/singles).
type SingleRequest struct {
	// Audio streams the samples of the uploaded WAV file as the client
	// sends them; its header has been read and Format() is known. Reading
	// it may fail with a codec error (the file is damaged: 422) or with an
	// *http.MaxBytesError (the upload is too large: 413).
	Audio *codec.WAVReader
	// ModelHash names the model to use: the client's choice, validated,
	// or the first model of GET /v1/models.
	ModelHash string
	// Credential is a credential to verify against, or "" for none. Only
	// its shape has been checked.
	Credential string
	// Channel is the leg that carries the voice in a stereo file:
	// "external" (channel 0, the customer) or "internal" (channel 1, the
	// agent). A mono file has only "external".
	Channel string
}

// SingleResult is the answer to a SingleRequest.
type SingleResult struct {
	Credential          string
	Authenticity        float64
	AudioSeconds        float64
	VoiceAudioCollected float64
	ModelHash           string
	// Score and Decision are set when the request carried a credential.
	Score    *float64
	Decision string // MATCH or NO_MATCH
}

// SingleScorer turns one recording into a credential, and scores it
// against a credential when one is given. It must read req.Audio to its
// end or until it has what it needs, and return:
//   - an error wrapping the reader's error when reading it fails;
//   - a *session.ValidationError naming the field (audio, credential,
//     model_hash) for input it cannot use: too little voice, a credential
//     that does not open or belongs to another tenant or model (422);
//   - any other error for a fault of its own (500).
//
// Score is called concurrently for different requests.
type SingleScorer interface {
	Score(ctx context.Context, tenantID string, req SingleRequest) (SingleResult, error)
}

// DefaultMaxUploadBytes is the default limit of a multipart upload: five
// minutes of 16 kHz stereo PCM16 fit.
const DefaultMaxUploadBytes = 32 << 20

// Limits of the form fields of /api/public/singles.
const (
	maxParts           = 16
	maxFieldBytes      = 256
	maxCredentialBytes = 64 << 10
)

// validCredential admits the characters of a sealed credential (base64url
// and friends); the scorer checks the rest.
var validCredential = regexp.MustCompile(`^[A-Za-z0-9._~+/=-]+$`)

// singleJSON is the data of a /api/public/singles answer.
type singleJSON struct {
	Credential          string   `json:"credential"`
	Authenticity        float64  `json:"authenticity"`
	AudioSeconds        float64  `json:"audio_seconds"`
	VoiceAudioCollected float64  `json:"voice_audio_collected"`
	ModelHash           string   `json:"model_hash"`
	Score               *float64 `json:"score,omitempty"`
	Decision            string   `json:"decision,omitempty"`
}

// errScorerMissing answers /api/public/singles while no scorer is wired.
var errScorerMissing = newError(http.StatusServiceUnavailable, CodeUnavailable, "speaker models are not available yet")

// singles serves POST /api/public/singles. The multipart body is read as
// a stream: the small fields first, then the audio part, whose samples go
// to the scorer as they arrive; nothing is buffered whole. Fields must
// therefore come before the audio part (curl -F and common clients send
// them in the order given).
func (s *Server) singles(w http.ResponseWriter, r *http.Request, c tenantCaller) error {
	limit := s.opts.MaxUploadBytes
	if r.ContentLength > limit {
		return tooLarge(limit)
	}
	_, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type")) // checked by tenantScoped
	allowUploadRate(r, s.opts.MinUploadRate)
	mr := multipart.NewReader(http.MaxBytesReader(w, r.Body, limit), params["boundary"])

	fields := map[string]string{}
	var (
		audio *multipart.Part
		bad   ValidationError
	)
	for parts := 0; audio == nil; parts++ {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return bodyError(err, limit)
		}
		if parts == maxParts {
			return newError(http.StatusBadRequest, CodeValidationFailed, fmt.Sprintf("the form has more than %d parts", maxParts))
		}
		name := part.FormName()
		switch name {
		case "audio":
			audio = part
			continue
		case "model_hash", "credential", "channel":
		default:
			// Unknown fields are ignored (spec section 9), but still read:
			// they count against the upload limit.
			if _, err := io.Copy(io.Discard, part); err != nil {
				return bodyError(err, limit)
			}
			continue
		}
		if _, dup := fields[name]; dup {
			bad.Fields = append(bad.Fields, FieldError{Field: name, Message: "is sent more than once"})
			continue
		}
		max := int64(maxFieldBytes)
		if name == "credential" {
			max = maxCredentialBytes
		}
		value, err := io.ReadAll(io.LimitReader(part, max+1))
		if err != nil {
			return bodyError(err, limit)
		}
		if int64(len(value)) > max {
			bad.Fields = append(bad.Fields, FieldError{Field: name, Message: fmt.Sprintf("is longer than %d bytes", max)})
			value = nil
		}
		fields[name] = strings.TrimSpace(string(value))
	}
	req := SingleRequest{ModelHash: fields["model_hash"], Credential: fields["credential"], Channel: fields["channel"]}
	s.checkSingleFields(&req, &bad)

	body := &bodyReader{r: audio}
	if audio == nil {
		bad.Fields = append(bad.Fields, FieldError{Field: "audio", Message: "is required: a WAV file (PCM16, µ-law or A-law; 8 or 16 kHz; mono or stereo) sent after the other fields"})
	} else {
		wav, err := codec.NewWAVReader(body)
		switch {
		case err == nil:
			req.Audio = wav
			if req.Channel == "internal" && wav.Format().Channels == 1 {
				bad.Fields = append(bad.Fields, FieldError{Field: "channel", Message: "internal needs a stereo recording"})
			}
		case body.err != nil:
			return bodyError(body.err, limit)
		case isAudioError(err):
			bad.Fields = append(bad.Fields, FieldError{Field: "audio", Message: audioMessage(err)})
		default:
			return err
		}
	}
	if len(bad.Fields) > 0 {
		return &bad
	}
	if s.opts.Singles == nil {
		return errScorerMissing
	}
	res, err := s.opts.Singles.Score(r.Context(), c.TenantID, req)
	switch {
	case err == nil:
	case body.err != nil:
		return bodyError(body.err, limit) // the upload failed, whatever the scorer made of it
	case isAudioError(err):
		return &ValidationError{Fields: []FieldError{{Field: "audio", Message: audioMessage(err)}}}
	default:
		return err
	}
	// Whatever follows the audio part is read, bounded by the limit; a
	// field there came too late to be used.
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return bodyError(err, limit)
		}
		if name := part.FormName(); name == "model_hash" || name == "credential" || name == "channel" || name == "audio" {
			return &ValidationError{Fields: []FieldError{{Field: name, Message: "must come before the audio part, which must be the last part"}}}
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": singleJSON(res)})
	return nil
}

// checkSingleFields validates the small fields and fills in defaults.
func (s *Server) checkSingleFields(req *SingleRequest, bad *ValidationError) {
	models := s.opts.Sessions.Models()
	if req.ModelHash == "" {
		if len(models) > 0 {
			req.ModelHash = models[0].Hash
		}
	} else {
		var hashes []string
		found := false
		for _, m := range models {
			hashes = append(hashes, m.Hash)
			found = found || m.Hash == req.ModelHash
		}
		if !found {
			bad.Fields = append(bad.Fields, FieldError{Field: "model_hash",
				Message: "must be the hash of a model of GET /v1/models: " + strings.Join(hashes, ", ")})
		}
	}
	switch req.Channel {
	case "":
		req.Channel = session.ChannelExternal
	case session.ChannelExternal, session.ChannelInternal:
	default:
		bad.Fields = append(bad.Fields, FieldError{Field: "channel", Message: "must be external or internal"})
	}
	if req.Credential != "" && !validCredential.MatchString(req.Credential) {
		bad.Fields = append(bad.Fields, FieldError{Field: "credential", Message: "is not a credential this service issued"})
	}
}

// audioErrors are the codec errors that describe a bad upload.
var audioErrors = []error{
	codec.ErrNotRIFF, codec.ErrNotWAVE, codec.ErrTruncatedHeader, codec.ErrMissingFmt, codec.ErrMissingData,
	codec.ErrMalformedFmt, codec.ErrChunkTooLarge, codec.ErrUnsupportedFormatTag, codec.ErrUnsupportedBitsPerSample,
	codec.ErrUnsupportedSampleRate, codec.ErrUnsupportedChannels, codec.ErrTruncatedData, codec.ErrTooLong,
}

func isAudioError(err error) bool {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return false
	}
	for _, e := range audioErrors {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// audioMessage is the client's message for a codec error: the codec's own
// text ("fit to show to the API client"), without any wrapping above it.
func audioMessage(err error) string {
	for _, e := range audioErrors {
		if errors.Is(err, e) {
			msg := err.Error()
			if i := strings.Index(msg, e.Error()); i >= 0 {
				msg = msg[i:]
			}
			return "is not a usable WAV file: " + strings.TrimPrefix(msg, "codec: ")
		}
	}
	return "is not a usable WAV file"
}

func tooLarge(limit int64) *Error {
	return newError(http.StatusRequestEntityTooLarge, CodePayloadTooLarge, fmt.Sprintf("the upload is larger than %d bytes", limit))
}

// bodyError maps an error met while reading the request body: too large
// (413), or anything else, a malformed multipart body or a connection
// that broke off (400).
func bodyError(err error, limit int64) error {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return tooLarge(limit)
	}
	return newError(http.StatusBadRequest, CodeValidationFailed, "the multipart/form-data body is malformed or ended early")
}

// bodyReader remembers the first error of the request body under the audio
// part, so that the handler can tell a failed upload from a failure of the
// WAV decoder or the scorer.
type bodyReader struct {
	r   io.Reader
	err error
}

func (b *bodyReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err != nil && err != io.EOF && b.err == nil {
		b.err = err
	}
	return n, err
}
