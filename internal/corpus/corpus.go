// Package corpus serves the speech corpora that package eval reads to the
// training command (cmd/earshot-train) and the speaker model's corpus test:
// each utterance's PCM and its voiced feature vectors, voicing taken from
// the corpus's ground-truth segments instead of a VAD. It is tooling: the
// service never imports it.
package corpus

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/earshot-voice/earshot/codec"
	"github.com/earshot-voice/earshot/eval"
	"github.com/earshot-voice/earshot/features"
)

// Utterance is one row of a corpus's manifest.csv with its speaker's base
// voice, as eval.Load reads it.
type Utterance struct {
	Dir       string // corpus directory
	WAV       string // path relative to Dir
	Split     string
	Speaker   string
	Utterance string
	Source    string // synthetic or real
	Condition string // clean, telephone or gappy
	BaseVoice string // from speakers.csv: equal base voices are one human voice
	SpeechS   float64
	// Segments are the ground-truth speech intervals in seconds.
	Segments [][2]float64
}

// Load reads the corpus in dir with eval.Load and returns its utterances
// in the manifest's order. Every utterance needs a WAV file.
func Load(dir string) ([]Utterance, error) {
	c, err := eval.Load(dir)
	if err != nil {
		return nil, err
	}
	us := slices.Clone(c.Utterances)
	slices.SortFunc(us, func(a, b eval.Utterance) int { return a.Line - b.Line })
	out := make([]Utterance, 0, len(us))
	for _, u := range us {
		if u.WAV == "" {
			return nil, fmt.Errorf("corpus: %s: manifest.csv line %d: no wav file", dir, u.Line)
		}
		o := Utterance{Dir: u.Dir, WAV: u.WAV, Split: u.Split, Speaker: u.Speaker, Utterance: u.ID,
			Source: u.Source, Condition: u.Condition, BaseVoice: u.BaseVoice, SpeechS: u.SpeechSeconds()}
		for _, g := range u.Segments {
			o.Segments = append(o.Segments, [2]float64{g.Start, g.End})
		}
		out = append(out, o)
	}
	return out, nil
}

// PCM reads the utterance's 8 kHz mono WAV.
func (u Utterance) PCM() ([]int16, error) {
	f, err := os.Open(filepath.Join(u.Dir, u.WAV))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fm, pcm, err := codec.ReadWAV(f, 8000*600)
	if err != nil {
		return nil, fmt.Errorf("corpus: %s: %w", u.WAV, err)
	}
	if fm.SampleRate != 8000 || fm.Channels != 1 {
		return nil, fmt.Errorf("corpus: %s: want 8 kHz mono, have %d Hz × %d", u.WAV, fm.SampleRate, fm.Channels)
	}
	return pcm, nil
}

// Voiced returns, for each whole 80-sample hop of n samples at 8 kHz, whether
// the hop's centre lies inside one of the ground-truth segments.
func Voiced(segments [][2]float64, n int) []bool {
	hops := n / 80
	v := make([]bool, hops)
	for i := range v {
		t := (float64(i)*80 + 40) / 8000
		for _, s := range segments {
			if t >= s[0] && t < s[1] {
				v[i] = true
				break
			}
		}
	}
	return v
}

// Sink receives what a live pipeline would give the voiceprint package:
// each 10 ms hop of PCM with its voice decision, and each feature vector.
type Sink interface {
	ObservePCM(hop []int16, voiced bool)
	Add(vec []float32) error
}

// Stream feeds pcm hop by hop through ext (then flushes it) with the given
// voice decisions, calling sink for every hop and every vector; sink may
// be nil. It returns the vectors appended to dst.
func Stream(ext *features.Extractor, pcm []int16, voiced []bool, sink Sink, dst []float32) ([]float32, error) {
	hs := ext.HopSize()
	dim := ext.Dim()
	for i, v := range voiced {
		hop := pcm[i*hs : (i+1)*hs]
		if sink != nil {
			sink.ObservePCM(hop, v)
		}
		var n int
		var err error
		start := len(dst)
		dst, n, err = ext.Append(dst, hop, v)
		if err != nil {
			return dst, err
		}
		if sink != nil {
			for j := 0; j < n; j++ {
				if err := sink.Add(dst[start+j*dim : start+(j+1)*dim]); err != nil {
					return dst, err
				}
			}
		}
	}
	start := len(dst)
	dst, n := ext.Flush(dst)
	if sink != nil {
		for j := 0; j < n; j++ {
			if err := sink.Add(dst[start+j*dim : start+(j+1)*dim]); err != nil {
				return dst, err
			}
		}
	}
	return dst, nil
}

// Features returns the voiced feature vectors of u from a fresh extractor
// made with opts, voiced frames chosen by the ground-truth segments.
func Features(u Utterance, opts features.Options) ([]float32, error) {
	pcm, err := u.PCM()
	if err != nil {
		return nil, err
	}
	ext, err := features.New(opts)
	if err != nil {
		return nil, err
	}
	return Stream(ext, pcm, Voiced(u.Segments, len(pcm)), nil, nil)
}
