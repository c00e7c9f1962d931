package vad

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/zaf/g711"
)

// corpusItem is one mono signal of a corpus with its ground truth per 10 ms
// frame.
type corpusItem struct {
	name   string
	group  string // condition (clean/telephone/gappy) or call channel (caller/agent)
	noise  string
	source string // synthetic or real (a recorded human voice); empty for calls
	codec  string // g711 or gsm+g711; empty for calls
	pcm    []int16
	ref    []int16 // the other channel of a call, nil for utterances
	truth  []bool
	echo   bool
}

func decodeULaw(b []byte) []int16 {
	out := make([]int16, len(b))
	for i, v := range b {
		out[i] = g711.DecodeUlawFrame(v)
	}
	return out
}

// truthFrames marks frame i as speech when [i·10 ms, (i+1)·10 ms) starts
// inside a segment [start, end).
func truthFrames(n int, segs [][2]float64) []bool {
	t := make([]bool, n)
	for _, s := range segs {
		a := int(math.Round(s[0] * 100))
		e := int(math.Round(s[1] * 100))
		for i := max(a, 0); i < min(e, n); i++ {
			t[i] = true
		}
	}
	return t
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
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var rows []map[string]string
	for {
		rec, err := r.Read()
		if err == io.EOF {
			return rows, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		m := make(map[string]string, len(head))
		for i, h := range head {
			if i < len(rec) {
				m[h] = rec[i]
			}
		}
		rows = append(rows, m)
	}
}

func parseSegments(s string) ([][2]float64, error) {
	var out [][2]float64
	for _, p := range strings.Split(s, ";") {
		if p == "" {
			continue
		}
		a, b, ok := strings.Cut(p, "-")
		if !ok {
			return nil, fmt.Errorf("bad segment %q", p)
		}
		x, err1 := strconv.ParseFloat(a, 64)
		y, err2 := strconv.ParseFloat(b, 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("bad segment %q", p)
		}
		out = append(out, [2]float64{x, y})
	}
	return out, nil
}

// loadCorpus reads the utterances of manifest.csv and both channels of every
// call in calls.csv under dir.
func loadCorpus(dir string) ([]corpusItem, error) {
	rows, err := readCSV(filepath.Join(dir, "manifest.csv"))
	if err != nil {
		return nil, err
	}
	var items []corpusItem
	for _, r := range rows {
		b, err := os.ReadFile(filepath.Join(dir, r["ulaw"]))
		if err != nil {
			return nil, err
		}
		segs, err := parseSegments(r["segments"])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r["ulaw"], err)
		}
		pcm := decodeULaw(b)
		items = append(items, corpusItem{
			name: r["utterance"], group: r["condition"], noise: r["noise"], source: r["source"], codec: r["codec"],
			pcm: pcm, truth: truthFrames(len(pcm)/frame8k, segs),
		})
	}
	calls, err := readCSV(filepath.Join(dir, "calls.csv"))
	if err != nil {
		if os.IsNotExist(err) {
			return items, nil
		}
		return nil, err
	}
	for _, c := range calls {
		b, err := os.ReadFile(filepath.Join(dir, c["file"]))
		if err != nil {
			return nil, err
		}
		if len(b)%2 != 0 {
			return nil, fmt.Errorf("%s: odd length for stereo", c["file"])
		}
		n := len(b) / 2
		ch := [2][]int16{make([]int16, n), make([]int16, n)}
		for i := 0; i < n; i++ {
			ch[0][i] = g711.DecodeUlawFrame(b[2*i])
			ch[1][i] = g711.DecodeUlawFrame(b[2*i+1])
		}
		segRows, err := readCSV(filepath.Join(dir, c["segments"]))
		if err != nil {
			return nil, err
		}
		var segs [2][][2]float64
		for _, s := range segRows {
			chn, err1 := strconv.Atoi(s["channel"])
			a, err2 := strconv.ParseFloat(s["start_s"], 64)
			e, err3 := strconv.ParseFloat(s["end_s"], 64)
			if err1 != nil || err2 != nil || err3 != nil || chn < 1 || chn > 2 {
				return nil, fmt.Errorf("%s: bad row %v", c["segments"], s)
			}
			segs[chn-1] = append(segs[chn-1], [2]float64{a, e})
		}
		name := strings.TrimSuffix(filepath.Base(c["file"]), ".ulaw")
		echo := c["echo_on_caller"] == "yes"
		noise := strings.SplitN(c["caller_noise"], "@", 2)[0]
		items = append(items,
			corpusItem{name: name + "/caller", group: "caller", noise: noise, pcm: ch[0], ref: ch[1],
				truth: truthFrames(n/frame8k, segs[0]), echo: echo},
			corpusItem{name: name + "/agent", group: "agent", noise: "white", pcm: ch[1], ref: ch[0],
				truth: truthFrames(n/frame8k, segs[1])})
	}
	return items, nil
}

// score accumulates frame counts for precision, recall and F1.
type score struct{ tp, fp, fn, tn int }

func (s *score) add(pred, truth bool) {
	switch {
	case pred && truth:
		s.tp++
	case pred:
		s.fp++
	case truth:
		s.fn++
	default:
		s.tn++
	}
}

func (s score) precision() float64 { return ratio(s.tp, s.tp+s.fp) }
func (s score) recall() float64    { return ratio(s.tp, s.tp+s.fn) }
func (s score) f1() float64        { return ratio(2*s.tp, 2*s.tp+s.fp+s.fn) }

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}
