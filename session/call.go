package session

import (
	"context"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/earshot-voice/earshot/codec"
	"github.com/earshot-voice/earshot/pipeline"
)

// Disconnector ends a call's audio stream; the AudioHook connection
// implements it. Disconnect must be safe for concurrent use.
type Disconnector interface {
	Disconnect(reason, info string)
}

// StreamSpec describes an opened audio stream.
type StreamSpec struct {
	TenantID string
	CallID   string
	// Encoding, SampleRate and Channels (the legs, in interleaving order)
	// describe the selected media; Channels is empty when the stream
	// offered nothing the server could take.
	Encoding   codec.Encoding
	SampleRate int
	Channels   []string
}

// MediaOffer is one media format a stream offers.
type MediaOffer struct {
	Format   string // "PCMU", "L16"
	Channels []string
	Rate     int
}

// callKey identifies a call within a tenant.
type callKey struct{ tenant, call string }

// maxQueuedFrames bounds a call's frame queue. At the 200 ms frames
// Genesys sends this is 6.4 s of audio: far more than a call's goroutine
// ever lags unless the machine is overloaded.
const maxQueuedFrames = 32

// frameQueue is a bounded FIFO of frames between a connection's reader
// and its call goroutine. When full it drops the oldest frame: the reader
// never blocks. Frame buffers come from frameBufs and go back once
// processed, so a steady stream allocates nothing, and a call holds a
// buffer only while a frame waits: its goroutine usually takes each frame
// at once, so thousands of calls share a few buffers.
type frameQueue struct {
	mu      sync.Mutex
	frames  []*[]byte // ring of queued frames
	head, n int
	dropped int64
}

// frameBufs are the buffers of queued frames, shared by every call.
var frameBufs = sync.Pool{New: func() any { b := make([]byte, 0, 3200); return &b }}

// push copies frame in; it reports whether the oldest frame was dropped.
func (q *frameQueue) push(frame []byte) bool {
	buf := frameBufs.Get().(*[]byte)
	*buf = append((*buf)[:0], frame...)
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.frames == nil {
		q.frames = make([]*[]byte, maxQueuedFrames)
	}
	dropped := false
	if q.n == len(q.frames) {
		frameBufs.Put(q.frames[q.head])
		q.frames[q.head] = nil
		q.head = (q.head + 1) % len(q.frames)
		q.n--
		q.dropped++
		dropped = true
	}
	q.frames[(q.head+q.n)%len(q.frames)] = buf
	q.n++
	return dropped
}

// pop returns the oldest frame, or nil. The caller gives it back with
// recycle when done.
func (q *frameQueue) pop() *[]byte {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.n == 0 {
		return nil
	}
	f := q.frames[q.head]
	q.frames[q.head] = nil
	q.head = (q.head + 1) % len(q.frames)
	q.n--
	return f
}

// recycle gives a popped frame's buffer back.
func (q *frameQueue) recycle(b *[]byte) { frameBufs.Put(b) }

// Call is one audio stream and the session it feeds. The connection's
// reader calls Audio, Discarded, Pause and End, which never block; Run is
// the call's own goroutine and owns the pipeline and the bound session.
type Call struct {
	m    *Manager
	spec StreamSpec
	key  callKey
	ctl  Disconnector
	log  *zap.Logger

	queue  frameQueue
	wake   chan struct{} // one pending wake-up
	mu     sync.Mutex
	ended  string // End's reason; "" while live
	attach *live  // a session to bind at the next frame
	detach string // id of a session to unbind

	// Owned by Run.
	pipe      *pipeline.Pipeline
	voiceLeg  string // the leg pipe analyses
	bound     *live
	collector collector
	boundHop  int64 // pipeline hop at which the session was bound
}

func (c *Call) notify() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// Audio queues a frame for the call goroutine.
func (c *Call) Audio(frame []byte) {
	if c.queue.push(frame) {
		c.m.observe().FrameDropped("queue_full")
	}
	c.notify()
}

// Discarded notes audio the client skipped; the timeline and the
// session's audio_seconds count only audio received.
func (c *Call) Discarded(time.Duration) {}

// Pause notes the client's pause state; nothing arrives while paused.
func (c *Call) Pause(bool) {}

// End says no more audio will come. It may be called more than once.
func (c *Call) End(reason string) {
	c.mu.Lock()
	if c.ended == "" {
		c.ended = reason
	}
	c.mu.Unlock()
	c.notify()
}

// bind asks the call goroutine to start feeding l.
func (c *Call) bind(l *live) {
	c.mu.Lock()
	c.attach = l
	c.mu.Unlock()
	c.notify()
}

// unbind asks the call goroutine to stop feeding session id (it was
// cancelled).
func (c *Call) unbind(id string) {
	c.mu.Lock()
	if c.attach != nil && c.attach.id == id {
		c.attach = nil
	}
	c.detach = id
	c.mu.Unlock()
	c.notify()
}

// Run processes the call's audio until End, then finalises its session.
// It returns when the work is done or ctx is cancelled.
func (c *Call) Run(ctx context.Context) {
	defer c.m.removeCall(c)
	c.setPipeline(ChannelExternal)
	for {
		select {
		case <-c.wake:
		case <-ctx.Done():
			c.finish(ctx, "shutdown")
			return
		}
		c.control(ctx)
		for f := c.queue.pop(); f != nil; f = c.queue.pop() {
			c.frame(ctx, *f)
			c.queue.recycle(f)
			c.control(ctx)
		}
		c.mu.Lock()
		ended := c.ended
		c.mu.Unlock()
		if ended != "" {
			c.finish(ctx, ended)
			return
		}
	}
}

// control applies pending binds and unbinds.
func (c *Call) control(ctx context.Context) {
	c.mu.Lock()
	attach, detach := c.attach, c.detach
	c.attach, c.detach = nil, ""
	c.mu.Unlock()
	if detach != "" && c.bound != nil && c.bound.id == detach {
		c.release()
		c.disconnectIfIdle()
	}
	if attach != nil {
		c.start(ctx, attach)
	}
}

// setPipeline (re)starts the pipeline to analyse one leg; the other leg
// of a stereo stream is the echo reference. It is a no-op when the stream
// has no media or already analyses that leg.
func (c *Call) setPipeline(leg string) {
	if len(c.spec.Channels) == 0 || (c.pipe != nil && c.voiceLeg == leg) {
		return
	}
	voice, ref := legIndexes(c.spec.Channels, leg)
	pipe, err := pipeline.New(pipeline.Options{Encoding: c.spec.Encoding, SampleRate: c.spec.SampleRate,
		Channels: len(c.spec.Channels), Voice: voice, Reference: ref, VADOnly: true})
	if err != nil {
		c.log.Error("starting the pipeline", zap.Error(err))
		return
	}
	c.pipe, c.voiceLeg = pipe, leg
}

// start binds a session: the stream's media must suit its audio settings.
func (c *Call) start(ctx context.Context, l *live) {
	if c.bound != nil {
		c.m.log.Warn("a second session for a bound call", zap.String("session_id", l.id))
		return
	}
	// The claim: this stream feeds the session, and no other does. While
	// the store is unreachable the session is bound anyway and the
	// flusher takes the claim when it returns.
	if err := c.m.claim(ctx, l); err != nil && contractAnswer(err) {
		// Another replica's stream feeds it, or it ended meanwhile.
		c.log.Debug("session not bound: claimed elsewhere or ended", zap.String("session_id", l.id), zap.Error(err))
		c.m.dropLive(l.id)
		return
	}
	if !mediaFits(l.settings, c.spec) {
		c.m.finish(ctx, l, nil, &Failure{Code: CodeAudioFormatMismatch,
			Message: "the audio stream offered no media matching the session's audio settings"}, nil)
		c.disconnectIfIdle()
		return
	}
	c.setPipeline(l.settings.Channel)
	col, err := c.m.newCollector(l)
	if err == nil && c.pipe != nil {
		model, _ := c.m.models.Lookup(l.sess.ModelHash)
		err = c.pipe.SetFeatures(model.Features)
	}
	if err != nil || c.pipe == nil {
		c.m.finish(ctx, l, nil, &Failure{Code: CodeInternal, Message: "the speaker model could not be prepared"}, nil)
		c.log.Error("preparing the speaker model", zap.String("session_id", l.id), zap.Error(err))
		c.disconnectIfIdle()
		return
	}
	c.bound, c.collector, c.boundHop = l, col, c.pipe.Hops()
	c.pipe.SetSink(col)
	c.m.observe().SessionsActive(string(l.sess.Kind), 1)
	c.log.Info("session bound to stream", zap.String("session_id", l.id))
}

// release unbinds the session.
func (c *Call) release() {
	if c.bound != nil {
		c.m.observe().SessionsActive(string(c.bound.sess.Kind), -1)
	}
	c.bound, c.collector = nil, nil
	if c.pipe != nil {
		c.pipe.SetSink(nil)
	}
}

// frame runs one frame through the pipeline and the bound session.
func (c *Call) frame(ctx context.Context, f []byte) {
	if c.pipe == nil {
		return
	}
	start := time.Now()
	if err := c.pipe.Write(f); err != nil {
		c.log.Warn("dropping undecodable frame", zap.Error(err))
		c.m.observe().FrameDropped("undecodable")
		return
	}
	if l := c.bound; l != nil {
		seconds := c.audioSeconds()
		l.setProgress(Progress{AudioSeconds: seconds, VADPercentage: c.collector.VADPercentage()})
		if seconds >= l.sess.AudioTotalDuration {
			c.complete(ctx, "")
		}
	}
	c.m.observe().FrameProcessed(time.Since(start))
}

// audioSeconds is the audio the bound session has received.
func (c *Call) audioSeconds() float64 {
	return float64(c.pipe.Hops()-c.boundHop) * pipeline.HopSamples / pipeline.Rate
}

// complete finalises the bound session with what it collected. ended is
// why the stream ended before audio_total_duration was reached, or "".
func (c *Call) complete(ctx context.Context, ended string) {
	l, col := c.bound, c.collector
	c.pipe.Flush()
	progress := Progress{AudioSeconds: min(c.audioSeconds(), l.sess.AudioTotalDuration), VADPercentage: col.VADPercentage()}
	c.release()
	c.m.finals <- struct{}{}
	res, fail := col.Finish(l.sess, progress)
	<-c.m.finals
	if fail != nil && fail.Code == CodeNotEnoughVoice && ended == "shutdown" {
		fail = &Failure{Code: CodeInternal, Message: "the server shut down before enough voice was collected; " + fail.Message}
	}
	c.m.finish(ctx, l, &progress, fail, res)
	c.disconnectIfIdle()
}

// finish ends the call: the pipeline drains and a bound session is
// finalised with what it has (a stream that ends early with enough voice
// finishes its session).
func (c *Call) finish(ctx context.Context, reason string) {
	if c.bound != nil {
		c.complete(ctx, reason)
	}
	c.log.Debug("call ended", zap.String("reason", reason))
}

// disconnectIfIdle ends the stream when no session needs it any more, so
// that the platform stops streaming (and billing).
func (c *Call) disconnectIfIdle() {
	if c.bound == nil && !c.m.hasLiveSession(c.key) {
		c.ctl.Disconnect("completed", "")
	}
}

// legIndexes returns the index of the leg to analyse and of the other leg
// (or -1).
func legIndexes(channels []string, voiceLeg string) (voice, ref int) {
	voice, ref = 0, -1
	for i, ch := range channels {
		if ch == voiceLeg {
			voice = i
		}
	}
	if len(channels) == 2 {
		ref = 1 - voice
	}
	return voice, ref
}
