package replay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/earshot-voice/earshot/audiohook"
)

// eventKind is what the reader tells the call's owner.
type eventKind uint8

const (
	evDisconnect eventKind = iota
	evClosed
	evPause
	evResume
	evSocket // the connection ended
)

type event struct {
	kind   eventKind
	reason string // disconnect reason
	info   string // disconnect info
	err    error  // evSocket
}

// errPongTimeout is a ping still unanswered when the next one is due.
var errPongTimeout = errors.New("no pong before the next ping was due")

// call is one replayed call. Its goroutine (the one that runs run) owns
// it: it dials, sends every message and frame, and starts and waits for
// the reader goroutine, which only reads and hands events over.
type call struct {
	r      *Runner
	index  int
	rec    *Recording
	callID string // the conversationId, and the register session's call_id

	cl         *audiohook.Client
	events     chan event
	done       chan struct{} // closed when the owner stops listening to events
	readerDone chan struct{}

	// Pings: the owner sets pingSent then pingSeq; the reader clears
	// pingSeq when the matching pong arrives.
	epoch    time.Time
	pingSeq  atomic.Int64
	pingSent atomic.Int64 // since epoch
	lastRTT  atomic.Int64

	mu       sync.Mutex
	protoErr string // the first protocol error of the server, as a kind

	handled int // frames sent or skipped, for the progress report; owner only

	// onOpened, if set, runs once the call has opened, before its audio
	// (RegisterAfterOpen creates the session there).
	onOpened func(ctx context.Context) (outcome, bool)
}

func newCall(r *Runner, i int) *call {
	id := uuid.NewString()
	if i < len(r.opts.CallIDs) {
		id = r.opts.CallIDs[i]
	}
	return &call{r: r, index: i, rec: r.recs[i%len(r.recs)], callID: id,
		events: make(chan event, 8), done: make(chan struct{}), readerDone: make(chan struct{})}
}

// run plays the call, with its register session around it when the run
// registers, and returns its outcome.
func (c *call) run(ctx context.Context) outcome {
	st := c.r.stats
	planned := int64(c.r.frames(c.rec, LayoutExternal).count())
	defer func() { st.progressFrames.Add(planned - int64(c.handled)) }()
	var sessionID string
	if c.r.rest != nil && registers(c.index, c.r.opts.RegisterShare) {
		if c.r.opts.RegisterAfterOpen {
			c.onOpened = func(ctx context.Context) (outcome, bool) {
				id, o, ok := c.register(ctx)
				sessionID = id
				return o, ok
			}
		} else {
			id, o, ok := c.register(ctx)
			if !ok {
				return o
			}
			sessionID = id
		}
	}
	o, streamed := c.play(ctx)
	if o.result == outcomeFailed && !o.counted {
		st.addError(o.kind, o.err)
	}
	if sessionID != "" {
		c.settle(ctx, sessionID, streamed)
	}
	return o
}

// register creates the call's register session. When it fails, ok is
// false and o is the call's outcome.
func (c *call) register(ctx context.Context) (id string, o outcome, ok bool) {
	st := c.r.stats
	total := c.r.opts.AudioTotalDuration
	if total == 0 {
		total = c.streamed()
	}
	id, err := c.r.rest.register(ctx, c.rec.Channels, c.callID, c.r.model, total, c.r.opts.AuthenticityThreshold)
	if err != nil {
		if ctx.Err() != nil {
			return "", outcome{result: outcomeCancelled}, false
		}
		kind := "api_register"
		var ae *apiError
		if errors.As(err, &ae) {
			kind = ae.kind()
		}
		st.addError(kind, err)
		o := failed(kind, err)
		o.counted = true
		return "", o, false
	}
	st.mu.Lock()
	st.sessions++
	st.mu.Unlock()
	return id, outcome{}, true
}

// registers reports whether call i of a run registers when a share of
// the calls do: the calls are spread evenly.
func registers(i int, share float64) bool {
	return math.Floor(float64(i+1)*share) > math.Floor(float64(i)*share)
}

// streamed is the audio the call streams: its file, capped by Duration.
func (c *call) streamed() time.Duration {
	n := c.rec.Samples
	if c.r.limit > 0 {
		n = min(n, c.r.limit)
	}
	return time.Duration(n) * time.Second / sampleRate
}

// settle follows the call's session to a terminal state; a session whose
// call never opened is cancelled rather than left to time out.
func (c *call) settle(ctx context.Context, id string, opened bool) {
	st, rest := c.r.stats, c.r.rest
	ctx = context.WithoutCancel(ctx) // a cancelled run still reports its sessions
	start := time.Now()
	if !opened {
		if err := rest.cancel(ctx, id); err != nil {
			st.addError(kindOf(err, "api_cancel"), err)
		}
	}
	s, err := rest.await(ctx, id, c.r.opts.PollTimeout, c.r.timing.poll)
	if err != nil {
		st.addError(kindOf(err, "api_poll"), err)
		st.count(st.states, "UNKNOWN")
		return
	}
	st.poll.Record(time.Since(start))
	st.count(st.states, s.State)
	if s.State == stateFailed {
		st.count(st.codes, s.code())
	}
}

func kindOf(err error, fallback string) string {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae.kind()
	}
	return fallback
}

// play dials, opens, streams and closes. It reports whether the call
// opened (a register session then has had its chance).
func (c *call) play(ctx context.Context) (outcome, bool) {
	o := c.r.opts
	st := c.r.stats
	dctx, cancel := context.WithTimeout(ctx, c.r.timing.dial)
	t0 := time.Now()
	cl, resp, err := audiohook.Dial(dctx, audiohook.ClientOptions{URL: o.url, APIKey: o.APIKey, Secret: o.secret,
		OrganizationID: o.OrganizationID, HTTPClient: c.r.dialHTTP})
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			return outcome{result: outcomeCancelled}, false
		}
		if resp != nil {
			return failed(fmt.Sprintf("dial_http_%d", resp.StatusCode), err), false
		}
		return failed("dial", err), false
	}
	st.dial.Record(time.Since(t0))
	c.cl = cl
	defer cl.Drop() // after a clean close this does nothing

	// A cancelled run gives the call abortGrace to end itself; then its
	// socket is dropped, which unblocks any read or write.
	ended := make(chan struct{})
	watchdogDone := make(chan struct{})
	stopWatchdog := context.AfterFunc(ctx, func() {
		defer close(watchdogDone)
		t := time.NewTimer(c.r.timing.abortGrace)
		defer t.Stop()
		select {
		case <-t.C:
			cl.Drop()
		case <-ended:
		}
	})
	defer func() {
		close(ended)
		if !stopWatchdog() {
			<-watchdogDone
		}
	}()

	participant := audiohook.Participant{ID: uuid.NewString(), ANI: fmt.Sprintf("+1555%07d", c.index%10_000_000),
		ANIName: "replay", DNIS: "+15550100"}
	octx, cancel := context.WithTimeout(ctx, c.r.timing.open)
	t1 := time.Now()
	offered := offer(o.Offer)
	opened, m, err := cl.Open(octx, audiohook.OpenParameters{OrganizationID: o.OrganizationID, ConversationID: c.callID,
		Participant: participant, Media: offered, Language: "en-US"})
	cancel()
	if err != nil {
		switch {
		case m.Type == audiohook.TypeDisconnect:
			// Refused before opened (unauthorized, typically).
			reason, info := c.disconnectReason(m)
			return c.closeSync(reason, info), false
		case ctx.Err() != nil:
			return outcome{result: outcomeCancelled}, false
		case octx.Err() != nil:
			return failed("open_timeout", err), false
		}
		return failed("open", err), false
	}
	st.opened.Record(time.Since(t1))
	c.epoch = time.Now()
	c.checkEnvelope(m, 0)

	go c.read(m.Seq)
	defer func() {
		cl.CloseSocket()
		close(c.done)
		<-c.readerDone
	}()

	layout, err := layoutOf(opened.Media, offered)
	if err != nil {
		st.count(st.media, "not_offered")
		// As the reference client: error 400, then close "error".
		c.send(audiohook.TypeError, audiohook.ErrorParameters{Code: 400, Message: err.Error()})
		c.closeAndWait("error")
		return c.finish(failed("bad_selection", err)), true
	}
	st.count(st.media, layout.String())
	if c.onOpened != nil {
		if o, ok := c.onOpened(ctx); !ok {
			c.closeAndWait("end")
			return c.finish(o), true
		}
	}
	return c.stream(ctx, layout, opened.StartPaused), true
}

// stream sends the frames on schedule, pings, and handles the server's
// events, then closes.
func (c *call) stream(ctx context.Context, layout Layout, startPaused bool) outcome {
	st, o := c.r.stats, c.r.opts
	fr := c.r.frames(c.rec, layout)
	timeline := c.r.frames(c.rec, LayoutExternal) // the frames to pace, also when no media was selected
	n := timeline.count()
	st.framesPlanned.Add(int64(n))
	sched := newSchedule(onGrid(c.r.epoch, time.Now()), o.FrameDuration, o.Speed)
	nextPing := c.epoch.Add(c.r.timing.firstPing)
	var p pause
	if startPaused {
		if err := p.begin(c); err != nil {
			return failed("write", err)
		}
	}
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for k := 0; k < n; {
		select {
		case ev := <-c.events:
			if out, end := c.handle(ev, &p); end {
				return out
			}
			continue
		case <-ctx.Done():
			return c.end(outcomeCancelled)
		default:
		}
		now := time.Now()
		if !now.Before(nextPing) {
			if err := c.ping(); err != nil {
				if errors.Is(err, errPongTimeout) {
					c.send(audiohook.TypeError, audiohook.ErrorParameters{Code: 408, Message: "Timeout waiting for pong"})
					c.closeAndWait("error")
					return c.finish(failed("pong_timeout", err))
				}
				return c.writeFailed(err)
			}
			nextPing = now.Add(c.r.timing.ping)
		}
		if due := sched.due(k); now.Before(due) {
			wake := due
			if nextPing.Before(wake) {
				wake = nextPing
			}
			timer.Reset(onGrid(c.r.epoch, wake).Sub(now))
			select {
			case ev := <-c.events:
				if out, end := c.handle(ev, &p); end {
					return out
				}
			case <-ctx.Done():
				return c.end(outcomeCancelled)
			case <-timer.C:
			}
			continue
		}
		samples := len(timeline.frame(k))
		if p.on || layout == LayoutNone {
			// Not sent, but the stream position moves on (spec section 8).
			c.cl.Advance(time.Duration(samples) * time.Second / sampleRate)
			if p.on {
				st.framesPaused.Add(1)
			}
		} else {
			frame := fr.frame(k)
			if sched.late(k, now) {
				st.framesLate.Add(1)
			}
			if sched.period > 0 {
				st.sendLag.Record(sched.lag(k, now))
			}
			if err := c.cl.SendAudio(context.Background(), frame); err != nil {
				return c.writeFailed(err)
			}
			st.framesSent.Add(1)
			st.bytes.Add(int64(len(frame)))
			st.samplesSent.Add(int64(samples))
		}
		k++
		c.handled++
		st.progressFrames.Add(1)
	}
	return c.end(outcomeCompleted)
}

// pause tracks a pause the server asked for (spec sections 4 and 8).
type pause struct {
	on    bool
	start time.Duration // stream position when it began
}

func (p *pause) begin(c *call) error {
	if !p.on {
		p.on, p.start = true, c.cl.Position()
	}
	return c.send(audiohook.TypePaused, nil) // also when asked again: it reports the state
}

func (p *pause) end(c *call) error {
	if !p.on {
		return nil
	}
	p.on = false
	return c.send(audiohook.TypeResumed, audiohook.DiscardedParameters{
		Start: audiohook.FormatDuration(p.start), Discarded: audiohook.FormatDuration(c.cl.Position() - p.start)})
}

// handle acts on a server event while streaming; end reports that the
// call is over, with its outcome.
func (c *call) handle(ev event, p *pause) (out outcome, end bool) {
	switch ev.kind {
	case evDisconnect:
		return c.disconnected(ev.reason, ev.info), true
	case evClosed:
		c.protocolError("unexpected_closed", errors.New("closed before close"))
		return c.finish(outcome{result: outcomeFailed}), true
	case evSocket:
		return c.finish(failed("socket", ev.err)), true
	case evPause:
		if err := p.begin(c); err != nil {
			return c.writeFailed(err), true
		}
	case evResume:
		if err := p.end(c); err != nil {
			return c.writeFailed(err), true
		}
	}
	return outcome{}, false
}

// end closes the call with close "end" (the audio is done, or the run
// was cancelled) and waits for closed.
func (c *call) end(result string) outcome {
	if o, ok := c.closeAndWait("end"); !ok {
		return c.finish(o)
	}
	return c.finish(outcome{result: result})
}

// disconnected answers a disconnect: close "disconnect", closed.
func (c *call) disconnected(reason, info string) outcome {
	if o, ok := c.closeAndWait("disconnect"); !ok {
		return c.finish(o)
	}
	return c.finish(disconnectOutcome(reason, info))
}

func disconnectOutcome(reason, info string) outcome {
	if reason == audiohook.ReasonCompleted {
		return outcome{result: outcomeDisconnected}
	}
	return failed("disconnect_"+reason, fmt.Errorf("the server disconnected with reason %q: %.200s", reason, info))
}

// closeAndWait sends close with reason and waits up to closeTimeout for
// closed, as the reference client does. Disconnects that cross the close
// are counted and otherwise ignored. ok is false when closed did not
// come; o then says why.
func (c *call) closeAndWait(reason string) (o outcome, ok bool) {
	t0 := time.Now()
	if err := c.send(audiohook.TypeClose, audiohook.CloseParameters{Reason: reason}); err != nil {
		return failed("write", err), false
	}
	timer := time.NewTimer(c.r.timing.close)
	defer timer.Stop()
	for {
		select {
		case ev := <-c.events:
			switch ev.kind {
			case evClosed:
				c.r.stats.closed.Record(time.Since(t0))
				return outcome{}, true
			case evSocket:
				return failed("socket", fmt.Errorf("connection ended before closed: %w", ev.err)), false
			}
		case <-timer.C:
			c.send(audiohook.TypeError, audiohook.ErrorParameters{Code: 408, Message: "Close transaction timeout"})
			return failed("close_timeout", fmt.Errorf("no closed within %v of close", c.r.timing.close)), false
		}
	}
}

// finish turns an outcome into a failure when the server broke the
// protocol during the call.
func (c *call) finish(o outcome) outcome {
	c.mu.Lock()
	kind := c.protoErr
	c.mu.Unlock()
	if kind != "" && (o.result != outcomeFailed || o.kind == "") {
		return outcome{result: outcomeFailed, kind: kind, counted: true} // counted when it was seen
	}
	return o
}

// writeFailed is the outcome of a failed write: the connection is gone.
// A disconnect already received explains it better.
func (c *call) writeFailed(err error) outcome {
	select {
	case ev := <-c.events:
		if ev.kind == evDisconnect {
			return c.finish(disconnectOutcome(ev.reason, ev.info))
		}
	default:
	}
	return c.finish(failed("write", err))
}

// closeSync answers a disconnect that came instead of opened: the reader
// is not running yet, so the owner reads the closed itself.
func (c *call) closeSync(reason, info string) outcome {
	t0 := time.Now()
	if err := c.send(audiohook.TypeClose, audiohook.CloseParameters{Reason: "disconnect"}); err != nil {
		return failed("write", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.r.timing.close)
	defer cancel()
	for {
		m, err := c.cl.Receive(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return failed("close_timeout", fmt.Errorf("no closed within %v of close", c.r.timing.close))
			}
			return failed("socket", err)
		}
		if m.Type == audiohook.TypeClosed {
			c.r.stats.closed.Record(time.Since(t0))
			c.cl.CloseSocket()
			return disconnectOutcome(reason, info)
		}
	}
}

// send sends a control message. Only the owner sends.
func (c *call) send(typ string, params any) error {
	_, err := c.cl.Send(context.Background(), typ, params)
	return err
}

// ping sends a ping with the last round trip measured, unless the last
// ping is still unanswered.
func (c *call) ping() error {
	if c.pingSeq.Load() != 0 {
		return errPongTimeout
	}
	var params any
	if rtt := c.lastRTT.Load(); rtt > 0 {
		params = map[string]string{"rtt": audiohook.FormatDuration(time.Duration(rtt))}
	}
	c.pingSent.Store(int64(time.Since(c.epoch)))
	c.pingSeq.Store(c.cl.Seq() + 1) // the owner is the only sender
	return c.send(audiohook.TypePing, params)
}

// disconnectReason reads a disconnect's reason, bounded to the protocol's
// reasons, and counts it.
func (c *call) disconnectReason(m audiohook.Message) (reason, info string) {
	var p audiohook.DisconnectParameters
	json.Unmarshal(m.Parameters, &p)
	reason = p.Reason
	switch reason {
	case audiohook.ReasonCompleted, audiohook.ReasonUnauthorized, audiohook.ReasonError:
	default:
		reason = "other"
	}
	c.r.stats.count(c.r.stats.reasons, reason)
	return reason, p.Info
}

// protocolError records a server protocol error; the call fails with the
// first one when it ends.
func (c *call) protocolError(kind string, err error) {
	c.r.stats.addError(kind, err)
	c.mu.Lock()
	if c.protoErr == "" {
		c.protoErr = kind
	}
	c.mu.Unlock()
}

// checkEnvelope checks what every server message must carry (spec
// sections 2 and 3): version "2", the session id, seq one more than the
// last, clientseq no greater than the last client seq, parameters an
// object.
func (c *call) checkEnvelope(m audiohook.Message, lastSeq int64) {
	switch {
	case m.Version != audiohook.Version:
		c.protocolError("server_version", fmt.Errorf("%s: version %q", m.Type, m.Version))
	case m.ID != c.cl.SessionID:
		c.protocolError("server_id", fmt.Errorf("%s: id %q is not the session id", m.Type, m.ID))
	case m.Seq != lastSeq+1:
		c.protocolError("server_seq", fmt.Errorf("%s: seq %d after %d", m.Type, m.Seq, lastSeq))
	case m.ClientSeq == nil || *m.ClientSeq > c.cl.Seq() || *m.ClientSeq < 0:
		c.protocolError("server_clientseq", fmt.Errorf("%s: clientseq missing or ahead of the client's seq %d", m.Type, c.cl.Seq()))
	case !isObject(m.Parameters):
		c.protocolError("server_parameters", fmt.Errorf("%s: parameters is not an object", m.Type))
	}
}

func isObject(raw json.RawMessage) bool {
	for _, b := range raw {
		switch b {
		case ' ', '\t', '\r', '\n':
			continue
		}
		return b == '{'
	}
	return false
}

// read is the reader goroutine: it reads every server message, checks it,
// times pongs, and hands the rest to the owner. It returns when the
// connection ends.
func (c *call) read(lastSeq int64) {
	defer close(c.readerDone)
	for {
		m, err := c.cl.Receive(context.Background())
		switch {
		case errors.Is(err, audiohook.ErrServerBinary):
			c.protocolError("server_binary", err)
			continue
		case errors.Is(err, audiohook.ErrServerMessage):
			c.protocolError("server_envelope", err)
			continue
		case err != nil:
			c.emit(event{kind: evSocket, err: err})
			return
		}
		c.checkEnvelope(m, lastSeq)
		lastSeq = m.Seq
		switch m.Type {
		case audiohook.TypePong:
			c.pong(m)
		case audiohook.TypeDisconnect:
			reason, info := c.disconnectReason(m)
			c.emit(event{kind: evDisconnect, reason: reason, info: info})
		case audiohook.TypeClosed:
			c.emit(event{kind: evClosed})
		case audiohook.TypePause:
			c.emit(event{kind: evPause})
		case audiohook.TypeResume:
			c.emit(event{kind: evResume})
		case audiohook.TypeEvent, audiohook.TypeReconnect, "updated":
			// Monitor ignores events; reconnection is not supported.
		case audiohook.TypeOpened:
			c.protocolError("unexpected_opened", errors.New("a second opened"))
		default:
			c.protocolError("server_unknown_type", fmt.Errorf("unknown message type %.32q", m.Type))
		}
	}
}

// pong times a pong against the outstanding ping.
func (c *call) pong(m audiohook.Message) {
	seq := c.pingSeq.Load()
	switch {
	case seq == 0:
		c.protocolError("pong_unexpected", errors.New("pong without a ping outstanding"))
	case m.ClientSeq == nil || *m.ClientSeq != seq:
		c.protocolError("pong_clientseq", fmt.Errorf("pong clientseq %v, ping seq %d", m.ClientSeq, seq))
	default:
		rtt := time.Since(c.epoch) - time.Duration(c.pingSent.Load())
		c.r.stats.pongRTT.Record(rtt)
		c.lastRTT.Store(int64(rtt))
		c.pingSeq.CompareAndSwap(seq, 0)
	}
}

// emit hands an event to the owner, unless the owner has stopped
// listening.
func (c *call) emit(ev event) {
	select {
	case c.events <- ev:
	case <-c.done:
	}
}
