package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"
)

// Session states of the Earshot REST API.
const (
	stateProcessing = "PROCESSING_AUDIO"
	stateSuccess    = "SUCCESS"
	stateFailed     = "FAILED"
)

// restClient makes the REST calls of a run with Register.
type restClient struct {
	base string
	key  string
	http *http.Client
}

// apiError is an unexpected answer of the REST API.
type apiError struct {
	op     string // models, settings, session, poll, cancel
	status int
	code   string
	msg    string
}

func (e *apiError) Error() string {
	return fmt.Sprintf("%s: HTTP %d %s %s", e.op, e.status, e.code, e.msg)
}

// kind is the error kind for the summary: bounded by the operations and
// the status codes.
func (e *apiError) kind() string { return fmt.Sprintf("api_%s_%d", e.op, e.status) }

// do sends a JSON request and decodes a JSON answer of status want into
// out (when not nil).
func (c *restClient) do(ctx context.Context, op, method, path string, in, out any, want int) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("apikey", c.key)
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if resp.StatusCode != want {
		e := &apiError{op: op, status: resp.StatusCode}
		var ej struct{ Code, Message string }
		if json.Unmarshal(data, &ej) == nil {
			e.code, e.msg = ej.Code, ej.Message
		}
		return e
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("%s: answer is not the expected JSON: %w", op, err)
		}
	}
	return nil
}

// model returns the hash of the first model that takes 8 kHz audio.
func (c *restClient) model(ctx context.Context) (string, error) {
	var out struct {
		Items []struct {
			Hash        string `json:"hash"`
			SampleRates []int  `json:"sample_rates"`
		} `json:"items"`
	}
	if err := c.do(ctx, "models", http.MethodGet, "/v1/models", nil, &out, http.StatusOK); err != nil {
		return "", err
	}
	for _, m := range out.Items {
		for _, r := range m.SampleRates {
			if r == sampleRate && m.Hash != "" {
				return m.Hash, nil
			}
		}
	}
	return "", fmt.Errorf("models: the server offers no model for %d Hz audio", sampleRate)
}

// register creates audio settings for µ-law of channels channels (the
// voice on the external leg) and a register session for callID.
func (c *restClient) register(ctx context.Context, channels int, callID, model string, total time.Duration, threshold float64) (string, error) {
	var settings struct {
		ID string `json:"id"`
	}
	err := c.do(ctx, "settings", http.MethodPost, "/v1/audio_settings", map[string]any{
		"audio_protocol": "audiohook", "audio_format": "raw", "audio_codec": "mulaw", "sample_format": "",
		"sample_rate": sampleRate, "channels": channels, "channel": "external",
	}, &settings, http.StatusCreated)
	if err != nil {
		return "", err
	}
	var sess struct {
		ID string `json:"id"`
	}
	err = c.do(ctx, "session", http.MethodPost, "/v1/register_session", map[string]any{
		"audio_settings_id": settings.ID, "authenticity_threshold": threshold,
		"audio_total_duration": total.Seconds(), "call_id": callID, "model_hash": model,
	}, &sess, http.StatusCreated)
	if err != nil {
		return "", err
	}
	return sess.ID, nil
}

// sessionState is a session's state and, when FAILED, its error code.
type sessionState struct {
	State string `json:"state"`
	Error *struct {
		Code string `json:"code"`
	} `json:"error"`
}

func (s sessionState) code() string {
	if s.Error == nil || s.Error.Code == "" {
		return "unknown"
	}
	return s.Error.Code
}

// session reads a session's state.
func (c *restClient) session(ctx context.Context, id string) (sessionState, error) {
	var s sessionState
	err := c.do(ctx, "poll", http.MethodGet, "/v1/register_session/"+url.PathEscape(id), nil, &s, http.StatusOK)
	return s, err
}

// cancel cancels a session whose call never streamed.
func (c *restClient) cancel(ctx context.Context, id string) error {
	return c.do(ctx, "cancel", http.MethodDelete, "/v1/register_session/"+url.PathEscape(id), nil, nil, http.StatusNoContent)
}

// await polls a session until it leaves PROCESSING_AUDIO or timeout
// passes, and returns the last state read.
func (c *restClient) await(ctx context.Context, id string, timeout, interval time.Duration) (sessionState, error) {
	deadline := time.Now().Add(timeout)
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return sessionState{}, ctx.Err()
		case <-t.C:
		}
		s, err := c.session(ctx, id)
		if err != nil || s.State != stateProcessing || !time.Now().Before(deadline) {
			return s, err
		}
		t.Reset(interval)
	}
}
