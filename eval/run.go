package eval

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/earshot-voice/earshot/voiceprint"
)

// The protocol's fixed counts (see docs/EVALUATION.md).
const (
	// enrolmentsPerSpeaker: enrolment k of a speaker with n utterances
	// starts at utterance k·n/3 (in id order, wrapping).
	enrolmentsPerSpeaker = 3
	// adjacentMixes: the first three of speaker A's mixes, with the next
	// speakers in name order (wrapping) whose base voice differs, are
	// reported on their own as well (make-corpus.sh names speakers by
	// engine, so they are mostly voices of one synthesiser), and A's
	// utterances in its mixes start at rotation k mod adjacentMixes.
	adjacentMixes = 3
	// loopsPerSpeaker: loops are cut from three utterances per speaker.
	loopsPerSpeaker = 3
	// loopPieceSeconds is the audio repeated in a loop, from the start of
	// the utterance's first speech segment.
	loopPieceSeconds = 2.5
	// loopMinSpeech is the ground-truth speech a loop piece must hold.
	loopMinSpeech = 1.5
	// maxLoopRepeats bounds a loop whose piece the VAD finds no voice in.
	maxLoopRepeats = 40
)

// Options configure Run. The zero value of every field but Model works.
type Options struct {
	// Model is the speaker model measured (from voiceprint.NewRegistry).
	Model voiceprint.Model
	// Workers is the number of goroutines that process audio; 0 means
	// runtime.GOMAXPROCS(0). The figures do not depend on it.
	Workers int
	// EnrolSeconds is the net voice of an enrolment (and of the
	// authenticity collections); 0 means 10.
	EnrolSeconds float64
	// AuthenticityThreshold is the authenticity threshold of the pass and
	// reject rates; 0 means 0.8.
	AuthenticityThreshold float64
	// Progress, when set, receives progress reports: a bar redrawn in
	// place when ProgressBar is set (a terminal), else a plain line every
	// 5 s.
	Progress    io.Writer
	ProgressBar bool
}

// ErrModel reports Options without a model.
var ErrModel = errors.New("eval: no speaker model")

// Run measures the corpus: it runs every utterance, call leg and test
// collection through pipeline.Pipeline with the model's features and the
// model's Enroller, as a live session does, and scores the trials with the
// model's Verifier. It returns when done or when ctx is cancelled (then
// with ctx's error). It starts Workers goroutines and a progress reporter,
// and waits for them before it returns.
func Run(ctx context.Context, c *Corpus, opts Options) (*Report, error) {
	if opts.Model.Hash == "" {
		return nil, ErrModel
	}
	if opts.Workers <= 0 {
		opts.Workers = runtime.GOMAXPROCS(0)
	}
	if opts.EnrolSeconds <= 0 {
		opts.EnrolSeconds = 10
	}
	if opts.AuthenticityThreshold <= 0 {
		opts.AuthenticityThreshold = 0.8
	}
	r := newRunner(c, opts)
	start := time.Now()
	stop := r.startProgress(start)
	err := r.run(ctx)
	stop()
	if err != nil {
		return nil, err
	}
	return r.report(time.Since(start)), nil
}

// runner holds a run's plan and results. Results are stored by job index
// and combined in that order, so the figures do not depend on scheduling.
type runner struct {
	c    *Corpus
	opts Options
	m    voiceprint.Model

	spks  []string
	base  []string // base voice per speaker
	src   []string // source (real, synthetic) per speaker
	utts  [][]int  // utterance indexes per speaker, in id order
	capFr int      // enrolment voice in frames

	enrolments []enrolment
	mixes      []collection
	loops      []collection
	calls      []callResult // two per call: caller, agent
	uttResults []uttResult

	jobsTotal int64
	jobsDone  atomic.Int64
	audioMs   atomic.Int64 // audio processed, for the progress report
}

// timing is the pipeline's work on one job: wall time on the worker
// goroutine and, where the system tells, CPU time of its thread.
type timing struct {
	audio   float64 // seconds of audio through the pipeline
	elapsed time.Duration
	cpu     time.Duration
	noCPU   bool // some stream had no CPU time
}

func (t *timing) add(s *stream) {
	t.audio += s.seconds()
	t.elapsed += s.elapsed
	t.cpu += s.cpu
	t.noCPU = t.noCPU || !s.cpuOK
}

func (t *timing) merge(o timing) {
	t.audio += o.audio
	t.elapsed += o.elapsed
	t.cpu += o.cpu
	t.noCPU = t.noCPU || o.noCPU
}

// enrolment is one enrolment collection: the template and its
// authenticity (a genuine single-speaker collection).
type enrolment struct {
	spk   int
	utts  []int        // utterances written into it, in order
	used  map[int]bool // the same, as a set
	voice float64
	tmpl  *voiceprint.Template // nil when the collection is too short
	auth  voiceprint.Authenticity
	timing
}

// collection is a mix or loop collection.
type collection struct {
	spks     []int
	adjacent bool  // a mix of speakers next to each other in name order
	utts     []int // utterances written into it, in order
	utt      int   // the looped utterance
	voice    float64
	auth     voiceprint.Authenticity
	timing
}

type callResult struct {
	conf Confusion
	timing
}

// trial is one verification trial: a test utterance against an
// enrolment.
type trial struct {
	enrolment int
	genuine   bool
	score     float64
	raw       float64
}

type uttResult struct {
	conf   Confusion
	voice  float64 // seconds of voice the VAD found
	trials []trial
	timing
	trialTime time.Duration
}

func newRunner(c *Corpus, opts Options) *runner {
	r := &runner{c: c, opts: opts, m: opts.Model, capFr: int(math.Round(opts.EnrolSeconds * 100))}
	for i, u := range c.Utterances {
		if len(r.spks) == 0 || r.spks[len(r.spks)-1] != u.Speaker {
			r.spks = append(r.spks, u.Speaker)
			r.base = append(r.base, u.BaseVoice)
			r.src = append(r.src, u.Source)
			r.utts = append(r.utts, nil)
		}
		k := len(r.spks) - 1
		r.utts[k] = append(r.utts[k], i)
	}
	n := len(r.spks)
	r.enrolments = make([]enrolment, n*enrolmentsPerSpeaker)
	for a := range n {
		for k, b := range r.partners(a) {
			r.mixes = append(r.mixes, collection{spks: []int{a, b}, adjacent: k < adjacentMixes})
		}
	}
	r.loops = make([]collection, n*loopsPerSpeaker)
	r.calls = make([]callResult, 2*len(c.Calls))
	r.uttResults = make([]uttResult, len(c.Utterances))
	r.jobsTotal = int64(len(r.enrolments) + len(r.mixes) + len(r.loops) + len(r.calls) + len(r.uttResults))
	return r
}

// partners are the speakers mixed with speaker a: every speaker whose
// base voice differs from a's, in name order from a on, wrapping.
func (r *runner) partners(a int) []int {
	var out []int
	for d := 1; d < len(r.spks); d++ {
		b := (a + d) % len(r.spks)
		if r.base[b] != r.base[a] {
			out = append(out, b)
		}
	}
	return out
}

// rotation returns speaker spk's utterances starting at the k-th of n
// starting points, wrapping.
func (r *runner) rotation(spk, k, n int) []int {
	list := r.utts[spk]
	off := k * len(list) / n
	return append(append([]int(nil), list[off:]...), list[:off]...)
}

// run does phase 1 (enrolments, test collections, calls), then phase 2
// (every utterance: VAD and verification trials against the enrolments).
func (r *runner) run(ctx context.Context) error {
	phase1 := len(r.enrolments) + len(r.mixes) + len(r.loops) + len(r.calls)
	err := r.parallel(ctx, phase1, func(_ *worker, i int) error {
		switch {
		case i < len(r.enrolments):
			return r.enrol(i)
		case i < len(r.enrolments)+len(r.mixes):
			return r.mix(i - len(r.enrolments))
		case i < len(r.enrolments)+len(r.mixes)+len(r.loops):
			return r.loop(i - len(r.enrolments) - len(r.mixes))
		}
		return r.callLeg(i - len(r.enrolments) - len(r.mixes) - len(r.loops))
	})
	if err != nil {
		return err
	}
	return r.parallel(ctx, len(r.uttResults), func(w *worker, i int) error { return r.utterance(w, i) })
}

// worker is one goroutine's state: its verifiers (one per enrolment,
// made on first use) and buffers.
type worker struct {
	verifiers []*voiceprint.Verifier
	labels    []bool
	vectors   []float32
}

// parallel runs fn for jobs 0..n−1 on the workers. The first error stops
// the others at their next job.
func (r *runner) parallel(ctx context.Context, n int, fn func(w *worker, i int) error) error {
	var (
		next    atomic.Int64
		wg      sync.WaitGroup
		mu      sync.Mutex
		firstEr error
	)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for range min(r.opts.Workers, max(n, 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// One thread per worker, so that its CPU time is its own.
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			w := &worker{verifiers: make([]*voiceprint.Verifier, len(r.enrolments))}
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := fn(w, i); err != nil {
					mu.Lock()
					if firstEr == nil {
						firstEr = err
					}
					mu.Unlock()
					cancel()
					return
				}
				r.jobsDone.Add(1)
			}
		}()
	}
	wg.Wait()
	if firstEr != nil {
		return firstEr
	}
	return context.Cause(ctx)
}

// load reads utterance i's audio.
func (r *runner) load(i int) (*audio, error) {
	u := &r.c.Utterances[i]
	a, err := loadAudio(u.Dir, u.ULaw, u.WAV, 1)
	if err != nil {
		return nil, fmt.Errorf("utterance %s: %w", u.ID, err)
	}
	return a, nil
}

// collect plays utterances into one capped enroller: each source is
// written whole (or until stop), in order, and played reports the
// utterances of which any audio was written. Each utterance is a stream
// of its own through a pipeline of its own (a flush would end the stream
// but keep the features' normalisation window), so the VAD and the feature
// normalisation start afresh with it, as at the start of a call: the
// corpus's utterances of a speaker were recorded in different conditions
// (noise, codec, level), and one stream through them would put a change
// of channel every few seconds inside the features' centred 3 s
// normalisation window, which no call has. Utterances of merged corpora
// may also differ in format. A loop repeats one utterance and stays one
// stream.
type collect struct {
	r      *runner
	s      *sink
	st     *stream
	done   timing // the streams before st
	played []int  // utterances of which audio was written, in order
}

func (r *runner) newCollect() *collect {
	return &collect{r: r, s: newSink(r.m, r.capFr)}
}

// play writes data (audio of utterance u, in a's format) until stop.
func (c *collect) play(u int, a *audio, data []byte, stop func() bool) error {
	if c.st != nil && len(c.played) > 0 && c.played[len(c.played)-1] != u {
		// Another recording: end the stream and start the next one, as a
		// call would (see collect).
		c.st.flush()
		c.done.add(c.st)
		c.st = nil
	}
	if c.st == nil {
		st, err := newStream(a, 0, -1, c.r.m.Features, c.s)
		if err != nil {
			return err
		}
		c.st = st
	}
	before := c.st.written
	err := c.st.write(data, stop)
	if c.st.written > before && (len(c.played) == 0 || c.played[len(c.played)-1] != u) {
		c.played = append(c.played, u)
	}
	c.r.audioMs.Add(int64(float64(c.st.written-before) / float64(a.frameBytes()) / float64(a.rate) * 1000))
	return err
}

// finish flushes the stream and returns the enroller's results.
func (c *collect) finish() (t timing, voice float64, err error) {
	if c.st == nil {
		return t, 0, nil
	}
	c.st.flush()
	t = c.done
	t.add(c.st)
	if c.s.err != nil {
		return t, 0, c.s.err
	}
	return t, c.s.voiceSeconds(), nil
}

// enrol makes enrolment i: speaker i/3's utterances from rotation i%3,
// whole, until the enroller holds EnrolSeconds of voice.
func (r *runner) enrol(i int) error {
	e := &r.enrolments[i]
	e.spk = i / enrolmentsPerSpeaker
	e.used = map[int]bool{}
	c := r.newCollect()
	capped := func() bool { return c.s.capped }
	for _, u := range r.rotation(e.spk, i%enrolmentsPerSpeaker, enrolmentsPerSpeaker) {
		if c.s.capped {
			break
		}
		a, err := r.load(u)
		if err != nil {
			return err
		}
		if err := c.play(u, a, a.data, capped); err != nil {
			return err
		}
	}
	e.utts = c.played
	for _, u := range e.utts {
		e.used[u] = true
	}
	var err error
	if e.timing, e.voice, err = c.finish(); err != nil {
		return err
	}
	e.auth = c.s.enr.Authenticity()
	e.tmpl, err = c.s.enr.Template()
	if errors.Is(err, voiceprint.ErrNotEnoughVoice) {
		e.tmpl, err = nil, nil
	}
	return err
}

// mix makes mix i, A's k-th: about half the enrolment voice of speaker A
// (from rotation k mod adjacentMixes of its utterances), then speaker B
// (from the middle of that rotation) up to the enrolment voice.
func (r *runner) mix(i int) error {
	m := &r.mixes[i]
	k := 0
	for j := i - 1; j >= 0 && r.mixes[j].spks[0] == m.spks[0]; j-- {
		k++
	}
	c := r.newCollect()
	half := r.capFr / 2
	for n, spk := range m.spks {
		order := r.rotation(spk, k%adjacentMixes, adjacentMixes)
		if n == 1 {
			order = append(order[len(order)/2:], order[:len(order)/2]...)
		}
		stop := func() bool { return c.s.capped || (n == 0 && c.s.frames >= half) }
		for _, u := range order {
			if stop() {
				break
			}
			a, err := r.load(u)
			if err != nil {
				return err
			}
			if err := c.play(u, a, a.data, stop); err != nil {
				return err
			}
		}
	}
	m.utts = c.played
	var err error
	if m.timing, m.voice, err = c.finish(); err != nil {
		return err
	}
	m.auth = c.s.enr.Authenticity()
	return nil
}

// loop makes loop i: a 2.5 s piece of one of speaker i/3's utterances,
// from the start of its speech, repeated until the enrolment voice.
func (r *runner) loop(i int) error {
	l := &r.loops[i]
	spk, k := i/loopsPerSpeaker, i%loopsPerSpeaker
	l.spks = []int{spk}
	l.utt = -1
	// Loop j of a speaker takes the first utterance from rotation j with a
	// usable piece that loops 0..j−1 did not take; the choices are made
	// again here, since other workers may be making those loops.
	taken := map[int]bool{}
	var piece [2]float64
	for j := 0; j <= k; j++ {
		l.utt = -1
		for _, u := range r.rotation(spk, j, loopsPerSpeaker) {
			if taken[u] {
				continue
			}
			if p, ok := loopPiece(&r.c.Utterances[u]); ok {
				l.utt, piece = u, p
				break
			}
		}
		if l.utt < 0 {
			return nil // no utterance has a usable piece: no loop
		}
		taken[l.utt] = true
	}
	a, err := r.load(l.utt)
	if err != nil {
		return err
	}
	data := a.cut(piece[0], piece[1])
	c := r.newCollect()
	capped := func() bool { return c.s.capped }
	for n := 0; n < maxLoopRepeats && !c.s.capped; n++ {
		if err := c.play(l.utt, a, data, capped); err != nil {
			return err
		}
	}
	l.utts = c.played
	if l.timing, l.voice, err = c.finish(); err != nil {
		return err
	}
	l.auth = c.s.enr.Authenticity()
	return nil
}

// loopPiece is the piece of u a loop repeats: loopPieceSeconds from the
// start of its first speech segment, if it holds loopMinSpeech of speech.
func loopPiece(u *Utterance) ([2]float64, bool) {
	if len(u.Segments) == 0 {
		return [2]float64{}, false
	}
	start := u.Segments[0].Start
	end := start + loopPieceSeconds
	if u.DurationS > 0 {
		end = min(end, u.DurationS)
	}
	var speech float64
	for _, g := range u.Segments {
		speech += max(0, min(g.End, end)-max(g.Start, start))
	}
	return [2]float64{start, end}, speech >= loopMinSpeech
}

// callLeg runs leg i%2 (0 caller, 1 agent) of call i/2, the other leg
// as the echo reference, and scores its voice decisions against the
// leg's segments.
func (r *runner) callLeg(i int) error {
	call := &r.c.Calls[i/2]
	leg := i % 2
	a, err := loadAudio(call.Dir, call.File, call.WAV, 2)
	if err != nil {
		return fmt.Errorf("call %s: %w", call.File+call.WAV, err)
	}
	segs := call.Caller
	if leg == 1 {
		segs = call.Agent
	}
	s := newSink(r.m, 0)
	s.truth = AppendFrameLabels(nil, segs, a.hops())
	st, err := newStream(a, leg, 1-leg, r.m.Features, s)
	if err != nil {
		return err
	}
	if err := st.write(a.data, nil); err != nil {
		return err
	}
	st.flush()
	r.audioMs.Add(int64(st.seconds() * 1000))
	res := &r.calls[i]
	res.conf = s.conf
	res.add(st)
	return s.err
}

// utterance runs utterance i through a pipeline, scores its voice
// decisions, and scores its voiced vectors against every enrolment it is
// a trial for.
func (r *runner) utterance(w *worker, i int) error {
	u := &r.c.Utterances[i]
	a, err := r.load(i)
	if err != nil {
		return err
	}
	s := newSink(r.m, 0)
	w.labels = AppendFrameLabels(w.labels[:0], u.Segments, a.hops())
	s.truth = w.labels
	s.keep, s.vectors = true, w.vectors[:0]
	st, err := newStream(a, 0, -1, r.m.Features, s)
	if err != nil {
		return err
	}
	if err := st.write(a.data, nil); err != nil {
		return err
	}
	st.flush()
	r.audioMs.Add(int64(st.seconds() * 1000))
	w.vectors = s.vectors
	if s.err != nil {
		return s.err
	}
	res := &r.uttResults[i]
	res.conf = s.conf
	res.voice = s.voiceSeconds()
	res.add(st)
	if s.frames == 0 {
		return nil // no voice: no trial
	}
	start := time.Now()
	spk := r.speakerOf(i)
	for e := range r.enrolments {
		en := &r.enrolments[e]
		if en.tmpl == nil || en.used[i] || (en.spk != spk && r.base[en.spk] == u.BaseVoice) {
			continue
		}
		v := w.verifiers[e]
		if v == nil {
			if v, err = r.m.NewVerifier(en.tmpl); err != nil {
				return err
			}
			w.verifiers[e] = v
		}
		v.Reset()
		if err := v.AddVectors(s.vectors); err != nil {
			return err
		}
		vr := v.Result()
		res.trials = append(res.trials, trial{enrolment: e, genuine: en.spk == spk, score: vr.Score, raw: vr.Raw})
	}
	res.trialTime = time.Since(start)
	return nil
}

func (r *runner) speakerOf(utt int) int {
	for k, list := range r.utts {
		if utt >= list[0] && utt <= list[len(list)-1] {
			return k
		}
	}
	return -1
}
