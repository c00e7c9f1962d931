// Package trial runs the voiceprint measurements on a corpus: speaker
// verification trials (EER) and the authenticity test sets (genuine
// single-speaker collections, two-speaker concatenations, looped audio).
// The training command fits its calibration with it on a held-out training
// split, and the voiceprint evaluation test reports it on dev. Voiced
// frames are chosen by the corpus's ground-truth segments, not by a VAD.
package trial

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"github.com/earshot-voice/earshot/features"
	"github.com/earshot-voice/earshot/internal/corpus"
	"github.com/earshot-voice/earshot/voiceprint"
)

// Verification is the outcome of the verification trials: raw scores and
// calibrated scores of genuine and impostor trials.
type Verification struct {
	Genuine, Impostor       []float64 // raw
	GenuineCal, ImpostorCal []float64 // calibrated (Result.Score)
	Models                  int
}

// Protocol: for each speaker and each of rotations starting points
// (utterance index i·n/rotations), the speaker's utterances from there on,
// in manifest order and wrapping, are enrolled one after the other until
// enrolSeconds of voice (the last one cut there); every other utterance of
// the speaker is a genuine trial, every utterance of a speaker with another
// base voice that the enrolment did not use is an impostor trial. Each
// utterance's features come from a fresh extractor.
func Verify(m voiceprint.Model, utts []corpus.Utterance, enrolSeconds float64, rotations int) (*Verification, error) {
	vecs := make([][]float32, len(utts))
	for i, u := range utts {
		v, err := corpus.Features(u, m.Features)
		if err != nil {
			return nil, err
		}
		vecs[i] = v
	}
	d := m.Dim
	bySpk := map[string][]int{}
	var spks []string
	for i, u := range utts {
		if _, ok := bySpk[u.Speaker]; !ok {
			spks = append(spks, u.Speaker)
		}
		bySpk[u.Speaker] = append(bySpk[u.Speaker], i)
	}
	type model struct {
		spk, base string
		t         *voiceprint.Template
		used      map[int]bool
	}
	var models []model
	enrolFrames := int(math.Round(enrolSeconds * 100))
	for _, s := range spks {
		list := bySpk[s]
		for r := 0; r < rotations; r++ {
			off := r * len(list) / rotations
			order := append(append([]int(nil), list[off:]...), list[:off]...)
			e := m.NewEnroller()
			used := map[int]bool{}
			for _, i := range order {
				if e.VoiceSeconds()*100 >= float64(enrolFrames) {
					break
				}
				used[i] = true
				v := vecs[i]
				room := (enrolFrames - int(math.Round(e.VoiceSeconds()*100))) * d
				if len(v) > room {
					v = v[:room]
				}
				if err := e.AddVectors(v); err != nil {
					return nil, err
				}
			}
			t, err := e.Template()
			if err != nil {
				return nil, fmt.Errorf("trial: enrol %s: %w", s, err)
			}
			models = append(models, model{spk: s, base: utts[list[0]].BaseVoice, t: t, used: used})
		}
	}
	res := &Verification{Models: len(models)}
	for _, md := range models {
		ver, err := m.NewVerifier(md.t)
		if err != nil {
			return nil, err
		}
		for i, u := range utts {
			if md.used[i] || (u.Speaker != md.spk && u.BaseVoice == md.base) || len(vecs[i]) == 0 {
				continue
			}
			ver.Reset()
			if err := ver.AddVectors(vecs[i]); err != nil {
				return nil, err
			}
			raw := ver.Raw()
			cal := ver.Result().Score
			if u.Speaker == md.spk {
				res.Genuine = append(res.Genuine, raw)
				res.GenuineCal = append(res.GenuineCal, cal)
			} else {
				res.Impostor = append(res.Impostor, raw)
				res.ImpostorCal = append(res.ImpostorCal, cal)
			}
		}
	}
	return res, nil
}

// EER returns the equal error rate of the scores and the threshold at it:
// the threshold t minimising max(FRR, FAR) with FRR the fraction of genuine
// scores below t and FAR the fraction of impostor scores at or above t.
func EER(genuine, impostor []float64) (eer, threshold float64) {
	g := append([]float64(nil), genuine...)
	im := append([]float64(nil), impostor...)
	sort.Float64s(g)
	sort.Float64s(im)
	all := append(append([]float64(nil), g...), im...)
	sort.Float64s(all)
	eer = 1
	for _, t := range all {
		frr := float64(sort.SearchFloat64s(g, t)) / float64(len(g))
		far := float64(len(im)-sort.SearchFloat64s(im, t)) / float64(len(im))
		if e := math.Max(frr, far); e < eer {
			eer, threshold = e, t
		}
	}
	return eer, threshold
}

// Rates returns the false reject and false accept rates at threshold t.
func Rates(genuine, impostor []float64, t float64) (frr, far float64) {
	for _, v := range genuine {
		if v < t {
			frr++
		}
	}
	for _, v := range impostor {
		if v >= t {
			far++
		}
	}
	return frr / float64(len(genuine)), far / float64(len(impostor))
}

// Collection is audio as one call would carry it: PCM with a voice
// decision per 10 ms hop.
type Collection struct {
	Kind     string // genuine, mix, overlap, loop or loop+noise
	Speakers []string
	PCM      []int16
	Voiced   []bool // one per whole hop of PCM
	segs     [][2]float64
}

func (c *Collection) voiceSeconds() float64 {
	n := 0
	for _, v := range c.Voiced {
		if v {
			n++
		}
	}
	return float64(n) / 100
}

// appendUtt appends u's audio, whole, and recomputes the hop decisions of
// the collection from the ground-truth segments, shifted to where u now
// starts: a repeated utterance is not realigned to the 10 ms hops.
func (c *Collection) appendUtt(u corpus.Utterance) error {
	pcm, err := u.PCM()
	if err != nil {
		return err
	}
	off := float64(len(c.PCM)) / 8000
	for _, s := range u.Segments {
		c.segs = append(c.segs, [2]float64{s[0] + off, s[1] + off})
	}
	c.PCM = append(c.PCM, pcm...)
	c.Voiced = corpus.Voiced(c.segs, len(c.PCM))
	return nil
}

// Sets builds the authenticity test sets from utts:
//   - genuine: per speaker, consecutive utterances concatenated until at
//     least voice seconds of voice, as many disjoint groups as there are;
//   - mix: for every pair of speakers with different base voices, voice/2
//     seconds of voice of the first followed by voice/2 of the second;
//   - overlap: for half the speakers, voice/2 seconds of voice of the
//     speaker and of the speaker half the list away, summed at half level
//     (both talking at once; reported, not a target);
//   - loop: each speaker's utterances with 1.5 to 6 s of voice, repeated
//     back to back until voice seconds of voice;
//   - loop+noise: the same with fresh white noise 20 dB below the voiced
//     audio's power added (a replay through a noisy line; reported, not a
//     target).
func Sets(utts []corpus.Utterance, voice float64) ([]Collection, error) {
	bySpk := map[string][]corpus.Utterance{}
	var spks []string
	for _, u := range utts {
		if _, ok := bySpk[u.Speaker]; !ok {
			spks = append(spks, u.Speaker)
		}
		bySpk[u.Speaker] = append(bySpk[u.Speaker], u)
	}
	var out []Collection
	// genuine
	for _, s := range spks {
		c := Collection{Kind: "genuine", Speakers: []string{s}}
		for _, u := range bySpk[s] {
			if err := c.appendUtt(u); err != nil {
				return nil, err
			}
			if c.voiceSeconds() >= voice {
				out = append(out, c)
				c = Collection{Kind: "genuine", Speakers: []string{s}}
			}
		}
	}
	// mixes: every unordered pair of speakers with different base voices,
	// the first speaker's last utterances then the second's, voice/2
	// seconds of voice each.
	for i, s := range spks {
		for _, o := range spks[i+1:] {
			if bySpk[o][0].BaseVoice == bySpk[s][0].BaseVoice {
				continue
			}
			c := Collection{Kind: "mix", Speakers: []string{s, o}}
			for k, spk := range []string{s, o} {
				list := bySpk[spk]
				for j := len(list) - 1; j >= 0; j-- {
					if err := c.appendUtt(list[j]); err != nil {
						return nil, err
					}
					if c.voiceSeconds() >= voice/2*float64(k+1) {
						break
					}
				}
			}
			out = append(out, c)
		}
	}
	// overlaps: the same voice/2 seconds of two speakers (each speaker with
	// the one half the list away) added sample by sample at half level.
	for i, s := range spks {
		o := spks[(i+len(spks)/2)%len(spks)]
		if i >= len(spks)/2 || bySpk[o][0].BaseVoice == bySpk[s][0].BaseVoice {
			continue
		}
		var parts [2]Collection
		for k, spk := range []string{s, o} {
			list := bySpk[spk]
			for j := len(list) - 1; j >= 0 && parts[k].voiceSeconds() < voice/2; j-- {
				if err := parts[k].appendUtt(list[j]); err != nil {
					return nil, err
				}
			}
		}
		c := Collection{Kind: "overlap", Speakers: []string{s, o}}
		n := min(len(parts[0].Voiced), len(parts[1].Voiced))
		c.PCM = make([]int16, 80*n)
		c.Voiced = make([]bool, n)
		for j := range c.PCM {
			c.PCM[j] = int16((int32(parts[0].PCM[j]) + int32(parts[1].PCM[j])) / 2)
		}
		for j := range c.Voiced {
			c.Voiced[j] = parts[0].Voiced[j] || parts[1].Voiced[j]
		}
		out = append(out, c)
	}
	// loops
	for _, s := range spks {
		for _, u := range bySpk[s] {
			if u.SpeechS < 1.5 || u.SpeechS > 6 {
				continue
			}
			c := Collection{Kind: "loop", Speakers: []string{s}}
			for c.voiceSeconds() < voice {
				if err := c.appendUtt(u); err != nil {
					return nil, err
				}
			}
			out = append(out, c)
			out = append(out, noisyCopy(c, "loop+noise", 20))
			break
		}
	}
	return out, nil
}

// noisyCopy returns c with white Gaussian noise snr dB below the mean
// power of its voiced hops added, from a fixed seed.
func noisyCopy(c Collection, kind string, snr float64) Collection {
	var p float64
	var n int
	for i, v := range c.Voiced {
		if v {
			for _, x := range c.PCM[i*80 : i*80+80] {
				p += float64(x) * float64(x)
			}
			n += 80
		}
	}
	rms := math.Sqrt(p / float64(max(n, 1)) / math.Pow(10, snr/10))
	r := rand.New(rand.NewPCG(uint64(len(c.PCM)), 7))
	o := Collection{Kind: kind, Speakers: c.Speakers, Voiced: c.Voiced, PCM: make([]int16, len(c.PCM))}
	for i, x := range c.PCM {
		o.PCM[i] = int16(math.Max(-32768, math.Min(32767, float64(x)+rms*r.NormFloat64())))
	}
	return o
}

// Authenticity runs a collection through a fresh extractor and an
// Enroller, as the live pipeline would, and returns its authenticity.
func Authenticity(m voiceprint.Model, c *Collection) (voiceprint.Authenticity, error) {
	ext, err := features.New(m.Features)
	if err != nil {
		return voiceprint.Authenticity{}, err
	}
	e := m.NewEnroller()
	pcm := c.PCM[:len(c.Voiced)*80]
	if _, err := corpus.Stream(ext, pcm, c.Voiced, e, nil); err != nil {
		return voiceprint.Authenticity{}, err
	}
	return e.Authenticity(), nil
}
