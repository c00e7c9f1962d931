package audiohook

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/google/uuid"
)

// ClientOptions configure Dial. URL and APIKey are required.
type ClientOptions struct {
	// URL is the server's AudioHook endpoint, ws:// or wss://.
	URL string
	// APIKey goes in X-API-KEY.
	APIKey string
	// Secret, when not nil, is the base64-decoded client secret the
	// upgrade is signed with.
	Secret []byte
	// OrganizationID, SessionID and CorrelationID are the identity
	// headers; empty ones get random UUIDs.
	OrganizationID, SessionID, CorrelationID string
	// Header holds extra upgrade headers (tests use it to tamper).
	Header http.Header
	// HTTPClient dials; default http.DefaultClient.
	HTTPClient *http.Client
	// Now is the signing clock; default time.Now.
	Now func() time.Time
}

// Client is the client side of an AudioHook session, as Genesys Cloud
// runs it: it signs the upgrade, numbers its messages, acknowledges the
// server's, and keeps the stream position. Send, SendAudio and Receive may
// be called concurrently with each other, but Receive from one goroutine
// at a time.
type Client struct {
	ws             *websocket.Conn
	SessionID      string
	OrganizationID string

	mu        sync.Mutex
	seq       int64 // last client seq sent
	serverSeq int64 // last server seq received
	samples   int64 // per channel, for position
	rate      int
	channels  int
	bytesPer  int
}

// Dial opens an AudioHook connection.
func Dial(ctx context.Context, opts ClientOptions) (*Client, *http.Response, error) {
	u, err := url.Parse(opts.URL)
	if err != nil {
		return nil, nil, err
	}
	c := &Client{SessionID: orDefault(opts.SessionID), OrganizationID: orDefault(opts.OrganizationID), rate: 8000, channels: 1, bytesPer: 1}
	h := http.Header{}
	setIDs(h, c.OrganizationID, c.SessionID, orDefault(opts.CorrelationID))
	h.Set("User-Agent", "Earshot-AudioHook-Client")
	h.Set("X-API-KEY", opts.APIKey)
	if opts.Secret != nil {
		now := time.Now
		if opts.Now != nil {
			now = opts.Now
		}
		nonce := make([]byte, 18)
		rand.Read(nonce)
		SignHeaders(h, u.RequestURI(), u.Host, opts.APIKey, opts.Secret, base64.RawURLEncoding.EncodeToString(nonce), now())
	}
	for k, vs := range opts.Header {
		h[k] = vs
	}
	ws, resp, err := websocket.Dial(ctx, opts.URL, &websocket.DialOptions{
		HTTPClient: opts.HTTPClient, HTTPHeader: h, CompressionMode: websocket.CompressionDisabled,
	})
	if err != nil {
		return nil, resp, err
	}
	ws.SetReadLimit(MaxMessageSize)
	c.ws = ws
	return c, resp, nil
}

func orDefault(id string) string {
	if id == "" {
		return uuid.NewString()
	}
	return id
}

// Seq returns the last seq the client sent.
func (c *Client) Seq() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.seq
}

// Position is the client's stream position.
func (c *Client) Position() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Duration(c.samples) * time.Second / time.Duration(c.rate)
}

// Send sends a message of type typ with the next seq, the last server seq
// and the current position. params nil sends {}.
func (c *Client) Send(ctx context.Context, typ string, params any) (Message, error) {
	if params == nil {
		params = struct{}{}
	}
	p, err := json.Marshal(params)
	if err != nil {
		return Message{}, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	serverSeq := c.serverSeq
	m := Message{Version: Version, ID: c.SessionID, Type: typ, Seq: c.seq, ServerSeq: &serverSeq,
		Position: FormatDuration(time.Duration(c.samples) * time.Second / time.Duration(c.rate)), Parameters: p}
	data, err := json.Marshal(m)
	if err != nil {
		return Message{}, err
	}
	return m, c.ws.Write(ctx, websocket.MessageText, data)
}

// SendRaw sends data as a text message as is, for tests of malformed
// input. If it is a well-formed message it does not advance the seq.
func (c *Client) SendRaw(ctx context.Context, data []byte) error {
	return c.ws.Write(ctx, websocket.MessageText, data)
}

// SkipSeq advances the client's seq as if a message had been sent.
func (c *Client) SkipSeq() {
	c.mu.Lock()
	c.seq++
	c.mu.Unlock()
}

// SendAudio sends one binary frame and advances the position by its
// samples.
func (c *Client) SendAudio(ctx context.Context, frame []byte) error {
	c.mu.Lock()
	c.samples += int64(len(frame) / (c.bytesPer * c.channels))
	c.mu.Unlock()
	return c.ws.Write(ctx, websocket.MessageBinary, frame)
}

// Advance moves the position without sending audio (pause, discard).
func (c *Client) Advance(d time.Duration) {
	c.mu.Lock()
	c.samples += int64(d * time.Duration(c.rate) / time.Second)
	c.mu.Unlock()
}

// Receive reads the next server message and records its seq as processed.
// A binary message from the server returns ErrServerBinary (Monitor is
// one-way), one that is not a JSON message ErrServerMessage; after either
// the connection is still usable.
func (c *Client) Receive(ctx context.Context) (Message, error) {
	typ, data, err := c.ws.Read(ctx)
	if err != nil {
		return Message{}, err
	}
	if typ != websocket.MessageText {
		return Message{}, ErrServerBinary
	}
	var m Message
	if err := json.Unmarshal(data, &m); err != nil {
		return Message{}, fmt.Errorf("%w: %w", ErrServerMessage, err)
	}
	c.mu.Lock()
	c.serverSeq = m.Seq
	c.mu.Unlock()
	return m, nil
}

// Open sends open and waits for opened, returning the selected media. It
// sets the position's rate and channel count from the selection.
func (c *Client) Open(ctx context.Context, p OpenParameters) (OpenedParameters, Message, error) {
	if _, err := c.Send(ctx, TypeOpen, p); err != nil {
		return OpenedParameters{}, Message{}, err
	}
	m, err := c.Receive(ctx)
	if err != nil {
		return OpenedParameters{}, m, err
	}
	if m.Type != TypeOpened {
		return OpenedParameters{}, m, fmt.Errorf("audiohook: got %q, want opened", m.Type)
	}
	var op OpenedParameters
	if err := json.Unmarshal(m.Parameters, &op); err != nil {
		return OpenedParameters{}, m, err
	}
	if len(op.Media) == 1 {
		c.mu.Lock()
		c.rate, c.channels, c.bytesPer = op.Media[0].Rate, len(op.Media[0].Channels), max(op.Media[0].BytesPerSample(), 1)
		c.mu.Unlock()
	}
	return op, m, nil
}

// CloseSocket closes the WebSocket normally.
func (c *Client) CloseSocket() error {
	return c.ws.Close(websocket.StatusNormalClosure, "")
}

// Drop closes the socket without a close handshake, as a lost connection.
func (c *Client) Drop() error { return c.ws.CloseNow() }
