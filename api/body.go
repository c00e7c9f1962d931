package api

import (
	"io"
	"net/http"
	"time"
)

// requestBody bounds the read of a request body with a read deadline on
// its connection, so that a client cannot hold a connection (and its
// goroutine) by sending a body slowly or not at all. The deadline is set
// when the handler starts; uploads extend it as their bytes arrive
// (allowRate). Reaching the end of the body lifts it, since the server
// then watches the idle connection for the client's close and must not
// take the deadline for one.
//
// Like any request body it is read by one goroutine at a time.
type requestBody struct {
	io.ReadCloser
	rc       *http.ResponseController
	deadline time.Time     // the current deadline
	rate     int64         // bytes per second that buy time; 0: none do
	carry    time.Duration // what the last reads bought below a nanosecond, times rate
	eof      bool
}

// newRequestBody sets the read deadline of w's connection and returns the
// body that lifts it; nil when w cannot set deadlines (a test recorder).
func newRequestBody(w http.ResponseWriter, body io.ReadCloser, deadline time.Time) *requestBody {
	rc := http.NewResponseController(w)
	if err := rc.SetReadDeadline(deadline); err != nil {
		return nil
	}
	return &requestBody{ReadCloser: body, rc: rc, deadline: deadline}
}

// allowRate lets the body take longer than the read timeout as long as
// it arrives at bytesPerSecond on average: each byte read moves the
// deadline 1/bytesPerSecond later.
func (b *requestBody) allowRate(bytesPerSecond int64) {
	if bytesPerSecond > 0 {
		b.rate = bytesPerSecond
	}
}

func (b *requestBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 && b.rate > 0 && !b.eof {
		// n bytes buy n/rate seconds; the remainder carries over, so
		// that small reads are not rounded away.
		total := time.Duration(n)*time.Second + b.carry
		b.deadline = b.deadline.Add(total / time.Duration(b.rate))
		b.carry = total % time.Duration(b.rate)
		b.rc.SetReadDeadline(b.deadline) //nolint:errcheck // it worked when the body was made
	}
	if err == io.EOF && !b.eof {
		b.eof = true
		b.rc.SetReadDeadline(time.Time{}) //nolint:errcheck // as above
	}
	return n, err
}

// stop ends the wait for the rest of the body: reads fail from now on.
// It is used when the request is answered before its body was read.
func (b *requestBody) stop() {
	b.rc.SetReadDeadline(time.Now()) //nolint:errcheck // as above
}

// allowUploadRate extends r's read deadline for an upload that arrives at
// bytesPerSecond at least, when r's body is bounded by a requestBody.
func allowUploadRate(r *http.Request, bytesPerSecond int64) {
	if b, ok := r.Body.(*requestBody); ok {
		b.allowRate(bytesPerSecond)
	}
}
