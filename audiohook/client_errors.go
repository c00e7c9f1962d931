package audiohook

import "errors"

// Errors of Client.Receive for a message that arrived but is not a
// server message. The connection is still usable after either; any other
// Receive error means the connection ended.
var (
	// ErrServerBinary is a binary message from the server: in AudioHook
	// Monitor audio flows only from the client (spec section 0).
	ErrServerBinary = errors.New("audiohook: binary message from the server")
	// ErrServerMessage is a text message that is not JSON of the message
	// envelope (spec section 2).
	ErrServerMessage = errors.New("audiohook: malformed server message")
)
