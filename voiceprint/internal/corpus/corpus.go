// Package corpus reads the speech corpora made by shared/tools/make-corpus.sh
// (manifest.csv, speakers.csv, wav/) for the voiceprint training command and
// the voiceprint evaluation test. It is tooling: the voiceprint package itself
// never imports it.
package corpus

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/earshot-voice/earshot/codec"
	"github.com/earshot-voice/earshot/features"
)

// Utterance is one row of manifest.csv with its speaker's base voice.
type Utterance struct {
	Dir       string // corpus directory
	WAV       string // path relative to Dir
	Split     string
	Speaker   string
	Utterance string
	Source    string // synthetic or real
	Condition string // clean, telephone or gappy
	BaseVoice string // from speakers.csv: equal base voices are one human voice
	Clipped   bool
	SpeechS   float64
	// Segments are the ground-truth speech intervals in seconds.
	Segments [][2]float64
}

// Load reads dir/manifest.csv and dir/speakers.csv, in file order.
func Load(dir string) ([]Utterance, error) {
	spk, err := readCSV(filepath.Join(dir, "speakers.csv"))
	if err != nil {
		return nil, err
	}
	base := map[string]string{}
	for _, r := range spk {
		base[r["speaker"]] = r["base_voice"]
	}
	rows, err := readCSV(filepath.Join(dir, "manifest.csv"))
	if err != nil {
		return nil, err
	}
	out := make([]Utterance, 0, len(rows))
	for _, r := range rows {
		u := Utterance{
			Dir: dir, WAV: r["wav"], Split: r["split"], Speaker: r["speaker"],
			Utterance: r["utterance"], Source: r["source"], Condition: r["condition"],
			BaseVoice: base[r["speaker"]], Clipped: r["clipped"] == "1",
		}
		if u.BaseVoice == "" {
			return nil, fmt.Errorf("corpus: speaker %q has no base_voice", u.Speaker)
		}
		u.SpeechS, _ = strconv.ParseFloat(r["speech_s"], 64)
		for _, seg := range strings.Split(r["segments"], ";") {
			if seg == "" {
				continue
			}
			a, b, ok := strings.Cut(seg, "-")
			if !ok {
				return nil, fmt.Errorf("corpus: bad segment %q in %s", seg, u.WAV)
			}
			s, err1 := strconv.ParseFloat(a, 64)
			e, err2 := strconv.ParseFloat(b, 64)
			if err1 != nil || err2 != nil {
				return nil, fmt.Errorf("corpus: bad segment %q in %s", seg, u.WAV)
			}
			u.Segments = append(u.Segments, [2]float64{s, e})
		}
		out = append(out, u)
	}
	return out, nil
}

func readCSV(path string) ([]map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	head, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("corpus: %s: %w", path, err)
	}
	var out []map[string]string
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("corpus: %s: %w", path, err)
		}
		m := make(map[string]string, len(head))
		for i, h := range head {
			if i < len(rec) {
				m[h] = rec[i]
			}
		}
		out = append(out, m)
	}
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
