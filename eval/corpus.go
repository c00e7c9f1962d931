package eval

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Segment is an interval of speech, in seconds from the start of a file.
type Segment struct{ Start, End float64 }

// Utterance is one row of manifest.csv.
type Utterance struct {
	// Line is the row's line in manifest.csv (the header is line 1).
	Line int
	// Dir is the directory of the corpus the utterance belongs to.
	Dir string
	// WAV and ULaw are the audio files, relative to Dir.
	// The µ-law file is read when present (it is what a call carries); the
	// WAV otherwise.
	WAV, ULaw string
	Speaker   string
	ID        string // the utterance column
	Source    string // synthetic or real
	Condition string // clean, telephone or gappy
	// Split is the corpus's split (dev, eval, train…), when the manifest
	// names it.
	Split string
	// DurationS is the audio's length in seconds (0 when the manifest
	// leaves it out).
	DurationS float64
	// Segments is the ground-truth speech, sorted by start.
	Segments []Segment
	// BaseVoice is the speaker's base_voice in speakers.csv: speakers with
	// the same base voice are one human voice and never impostors of each
	// other.
	BaseVoice string
}

// SpeechSeconds is the ground-truth speech of u.
func (u *Utterance) SpeechSeconds() float64 {
	var s float64
	for _, g := range u.Segments {
		s += g.End - g.Start
	}
	return s
}

// Call is one row of calls.csv with its segments file: a stereo call,
// channel 1 the caller (external leg), channel 2 the agent (internal).
type Call struct {
	Line int
	// Dir is the directory of the corpus the call belongs to.
	Dir string
	// File is the interleaved stereo µ-law file, WAV the same call as a
	// WAV; both relative to Dir. File is read when set.
	File, WAV    string
	SegmentsFile string
	DurationS    float64
	// Caller and Agent are the segments of channels 1 and 2, sorted.
	Caller, Agent []Segment
}

// Corpus is a labelled corpus as make-corpus.sh writes it, or several
// merged into one (Merge). Utterances are sorted by speaker and utterance
// id, calls by file name, so that a run does not depend on the order of
// the manifest's rows.
type Corpus struct {
	// Dir is the corpus directory; for a merged corpus, the directories
	// joined by commas.
	Dir        string
	Utterances []Utterance
	Calls      []Call
}

// Speakers returns the distinct speakers of the utterances, sorted.
func (c *Corpus) Speakers() []string {
	var out []string
	for _, u := range c.Utterances {
		if len(out) == 0 || out[len(out)-1] != u.Speaker {
			out = append(out, u.Speaker)
		}
	}
	return out
}

// Load reads the corpus in dir: manifest.csv and speakers.csv (required),
// calls.csv and the segments files it names (when calls.csv exists).
func Load(dir string) (*Corpus, error) {
	c := &Corpus{Dir: dir}
	var base map[string]string
	if err := readFile(dir, "speakers.csv", func(r io.Reader) (err error) {
		base, err = ParseSpeakers(r, "speakers.csv")
		return err
	}); err != nil {
		return nil, err
	}
	if err := readFile(dir, "manifest.csv", func(r io.Reader) (err error) {
		c.Utterances, err = ParseManifest(r, "manifest.csv")
		return err
	}); err != nil {
		return nil, err
	}
	for i := range c.Utterances {
		u := &c.Utterances[i]
		u.Dir = dir
		b, ok := base[u.Speaker]
		if !ok {
			return nil, fmt.Errorf("%w: manifest.csv line %d: speaker %q is not in speakers.csv", ErrCorpus, u.Line, u.Speaker)
		}
		u.BaseVoice = b
	}
	slices.SortFunc(c.Utterances, func(a, b Utterance) int {
		if n := strings.Compare(a.Speaker, b.Speaker); n != 0 {
			return n
		}
		return strings.Compare(a.ID, b.ID)
	})
	if _, err := os.Stat(filepath.Join(dir, "calls.csv")); errors.Is(err, os.ErrNotExist) {
		return c, nil
	}
	if err := readFile(dir, "calls.csv", func(r io.Reader) (err error) {
		c.Calls, err = ParseCalls(r, "calls.csv")
		return err
	}); err != nil {
		return nil, err
	}
	for i := range c.Calls {
		call := &c.Calls[i]
		call.Dir = dir
		if err := readFile(dir, call.SegmentsFile, func(r io.Reader) (err error) {
			call.Caller, call.Agent, err = ParseCallSegments(r, call.SegmentsFile)
			return err
		}); err != nil {
			return nil, err
		}
	}
	slices.SortFunc(c.Calls, func(a, b Call) int { return strings.Compare(a.File+a.WAV, b.File+b.WAV) })
	return c, nil
}

func readFile(dir, name string, parse func(io.Reader) error) error {
	f, err := os.Open(filepath.Join(dir, name))
	if err != nil {
		return fmt.Errorf("%w: %w", ErrCorpus, err)
	}
	defer f.Close()
	return parse(f)
}

// table is a CSV file read with its header: rows of fields by column name.
type table struct {
	name string
	cols map[string]int
	rows [][]string
	line []int // line of each row
}

// readTable reads a CSV file with a header row; every row must have the
// header's number of fields, and the required columns must exist.
func readTable(r io.Reader, name string, required ...string) (*table, error) {
	cr := csv.NewReader(r)
	header, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: %s is empty", ErrCorpus, name)
	}
	if err != nil {
		return nil, csvError(name, err)
	}
	t := &table{name: name, cols: map[string]int{}}
	for i, h := range header {
		t.cols[strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))] = i
	}
	for _, col := range required {
		if _, ok := t.cols[col]; !ok {
			return nil, fmt.Errorf("%w: %s has no column %q", ErrCorpus, name, col)
		}
	}
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return t, nil
		}
		if err != nil {
			return nil, csvError(name, err)
		}
		line, _ := cr.FieldPos(0)
		t.rows = append(t.rows, rec)
		t.line = append(t.line, line)
	}
}

func csvError(name string, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return fmt.Errorf("%w: %s line %d: %w", ErrCorpus, name, pe.Line, pe.Err)
	}
	return fmt.Errorf("%w: %s: %w", ErrCorpus, name, err)
}

// get returns row i's field of col ("" when the file has no such column).
func (t *table) get(i int, col string) string {
	j, ok := t.cols[col]
	if !ok {
		return ""
	}
	return strings.TrimSpace(t.rows[i][j])
}

// errorf makes an error about row i.
func (t *table) errorf(i int, format string, args ...any) error {
	return fmt.Errorf("%w: %s line %d: %s", ErrCorpus, t.name, t.line[i], fmt.Sprintf(format, args...))
}

// need returns row i's non-empty field of col.
func (t *table) need(i int, col string) (string, error) {
	v := t.get(i, col)
	if v == "" {
		return "", t.errorf(i, "empty %s", col)
	}
	return v, nil
}

// seconds parses row i's field of col as seconds (≥ 0); an empty field is
// 0 unless required.
func (t *table) seconds(i int, col string, required bool) (float64, error) {
	v := t.get(i, col)
	if v == "" && !required {
		return 0, nil
	}
	x, err := parseSeconds(v)
	if err != nil {
		return 0, t.errorf(i, "%s %q: %v", col, v, err)
	}
	return x, nil
}

func parseSeconds(v string) (float64, error) {
	x, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
		return 0, errors.New("not a number of seconds")
	}
	return x, nil
}

// ParseSegments parses the segments column of manifest.csv:
// "start-end;start-end", seconds, end after start. An empty field is no
// speech. The result is sorted by start.
func ParseSegments(s string) ([]Segment, error) {
	var out []Segment
	for _, part := range strings.Split(s, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		a, b, ok := strings.Cut(part, "-")
		if !ok {
			return nil, fmt.Errorf("segment %q is not start-end", part)
		}
		start, err1 := parseSeconds(a)
		end, err2 := parseSeconds(b)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("segment %q: not seconds", part)
		}
		if end <= start {
			return nil, fmt.Errorf("segment %q ends before it starts", part)
		}
		out = append(out, Segment{start, end})
	}
	slices.SortFunc(out, func(a, b Segment) int { return cmpFloat(a.Start, b.Start) })
	return out, nil
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// ParseManifest reads manifest.csv (name is used in errors). Required
// columns: speaker, utterance, condition, segments, and ulaw or wav (a row
// must fill one of them). Optional: source, duration_s. Other columns are
// ignored. Utterance ids must be unique.
func ParseManifest(r io.Reader, name string) ([]Utterance, error) {
	t, err := readTable(r, name, "speaker", "utterance", "condition", "segments")
	if err != nil {
		return nil, err
	}
	_, hasU := t.cols["ulaw"]
	_, hasW := t.cols["wav"]
	if !hasU && !hasW {
		return nil, fmt.Errorf("%w: %s has neither a ulaw nor a wav column", ErrCorpus, name)
	}
	seen := map[string]int{}
	out := make([]Utterance, 0, len(t.rows))
	for i := range t.rows {
		u := Utterance{Line: t.line[i], WAV: t.get(i, "wav"), ULaw: t.get(i, "ulaw"), Source: t.get(i, "source"),
			Split: t.get(i, "split")}
		if u.WAV == "" && u.ULaw == "" {
			return nil, t.errorf(i, "no audio file (ulaw and wav are empty)")
		}
		if u.Speaker, err = t.need(i, "speaker"); err != nil {
			return nil, err
		}
		if u.ID, err = t.need(i, "utterance"); err != nil {
			return nil, err
		}
		if u.Condition, err = t.need(i, "condition"); err != nil {
			return nil, err
		}
		if u.DurationS, err = t.seconds(i, "duration_s", false); err != nil {
			return nil, err
		}
		if u.Segments, err = ParseSegments(t.get(i, "segments")); err != nil {
			return nil, t.errorf(i, "segments: %v", err)
		}
		if prev, ok := seen[u.ID]; ok {
			return nil, t.errorf(i, "utterance %q already on line %d", u.ID, prev)
		}
		seen[u.ID] = u.Line
		out = append(out, u)
	}
	return out, nil
}

// ParseSpeakers reads speakers.csv: the base_voice of every speaker.
func ParseSpeakers(r io.Reader, name string) (map[string]string, error) {
	t, err := readTable(r, name, "speaker", "base_voice")
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for i := range t.rows {
		spk, err := t.need(i, "speaker")
		if err != nil {
			return nil, err
		}
		b, err := t.need(i, "base_voice")
		if err != nil {
			return nil, err
		}
		if _, ok := out[spk]; ok {
			return nil, t.errorf(i, "speaker %q listed twice", spk)
		}
		out[spk] = b
	}
	return out, nil
}

// ParseCalls reads calls.csv: the call files (file and/or wav), their
// segments file and optional duration_s. Segments are read by Load.
func ParseCalls(r io.Reader, name string) ([]Call, error) {
	t, err := readTable(r, name, "segments")
	if err != nil {
		return nil, err
	}
	out := make([]Call, 0, len(t.rows))
	for i := range t.rows {
		c := Call{Line: t.line[i], File: t.get(i, "file"), WAV: t.get(i, "wav")}
		if c.File == "" && c.WAV == "" {
			return nil, t.errorf(i, "no audio file (file and wav are empty)")
		}
		if c.SegmentsFile, err = t.need(i, "segments"); err != nil {
			return nil, err
		}
		if c.DurationS, err = t.seconds(i, "duration_s", false); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// ParseCallSegments reads a call's segments file (channel, start_s,
// end_s; channel 1 the caller, 2 the agent) into the sorted segments of
// each channel.
func ParseCallSegments(r io.Reader, name string) (caller, agent []Segment, err error) {
	t, err := readTable(r, name, "channel", "start_s", "end_s")
	if err != nil {
		return nil, nil, err
	}
	for i := range t.rows {
		start, err := t.seconds(i, "start_s", true)
		if err != nil {
			return nil, nil, err
		}
		end, err := t.seconds(i, "end_s", true)
		if err != nil {
			return nil, nil, err
		}
		if end <= start {
			return nil, nil, t.errorf(i, "segment %.2f-%.2f ends before it starts", start, end)
		}
		switch ch := t.get(i, "channel"); ch {
		case "1":
			caller = append(caller, Segment{start, end})
		case "2":
			agent = append(agent, Segment{start, end})
		default:
			return nil, nil, t.errorf(i, "channel %q is not 1 or 2", ch)
		}
	}
	byStart := func(a, b Segment) int { return cmpFloat(a.Start, b.Start) }
	slices.SortFunc(caller, byStart)
	slices.SortFunc(agent, byStart)
	return caller, agent, nil
}
