// Command earshot-train builds Earshot's telephone speaker model: a
// Gaussian mixture universal background model over the MFCC vectors of the
// features package, a nuisance projection, a score calibration and the
// authenticity parameters, from labelled corpora in the format earshot
// eval reads (never the dev or eval splits). With -from it keeps an
// existing model's background model and projection and calibrates them
// anew. The output is deterministic for the same corpora and flags; the
// command that made the shipped model is in voiceprint/models/README.md.
//
//	go run ./cmd/earshot-train -corpus /tmp/corpus-train,/tmp/corpus-train2 \
//		-calib /tmp/corpus-train6 -out voiceprint/models/telephone-gmm64.bin
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/earshot-voice/earshot/features"
	"github.com/earshot-voice/earshot/internal/corpus"
	"github.com/earshot-voice/earshot/internal/trial"
	"github.com/earshot-voice/earshot/voiceprint"
)

func main() {
	if err := run(context.Background(), os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "earshot-train:", err)
		os.Exit(1)
	}
}

type config struct {
	corpora    []string
	out        string
	components int
	iters      int
	final      int
	maxFrames  int
	floor      float64
	naps       []int
	calib      []string
	authCalib  []string
	from       string
	shortlist  int
	opts       features.Options
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("earshot-train", flag.ContinueOnError)
	dirs := fs.String("corpus", "", "comma-separated corpus directories (make-corpus.sh output; not dev or eval)")
	var c config
	fs.StringVar(&c.out, "out", "voiceprint/models/telephone-gmm64.bin", "model file to write")
	fs.IntVar(&c.components, "components", 64, "mixture components (a power of two)")
	fs.IntVar(&c.iters, "iters", 6, "EM iterations after each split")
	fs.IntVar(&c.final, "final", 12, "EM iterations at the final size")
	fs.IntVar(&c.maxFrames, "max-frames", 600000, "at most this many frames train the UBM (evenly subsampled)")
	fs.Float64Var(&c.floor, "floor", 0.01, "variance floor as a fraction of the global variance")
	naps := fs.String("nap", "0,10,20,30,40", "candidate numbers of nuisance directions; the calibration split picks one")
	calib := fs.String("calib", "", "comma-separated held-out corpora (not dev or eval) for calibration and thresholds")
	authCalib := fs.String("auth-calib", "", "comma-separated corpora among -calib on which the authenticity parameters are fitted (default: all of -calib)")
	fs.StringVar(&c.from, "from", "", "start from this model file's UBM and nuisance projection instead of training them (-corpus, -components, -iters, -final, -max-frames, -floor, -nap and the feature flags are then unused)")
	fs.IntVar(&c.shortlist, "shortlist", 16, "components that carry each frame's posterior (voiceprint.Definition.Shortlist); also applied to a -from model")
	fs.BoolVar(&c.opts.NormVariance, "norm-variance", true, "features: variance normalisation too")
	fs.IntVar(&c.opts.NumCepstra, "cepstra", 13, "features: static coefficients (log energy and c1…)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dirs == "" && c.from == "" {
		return errors.New("-corpus (or -from) is required")
	}
	if *dirs != "" {
		c.corpora = strings.Split(*dirs, ",")
	}

	for _, n := range strings.Split(*naps, ",") {
		r, err := strconv.Atoi(n)
		if err != nil || r < 0 {
			return fmt.Errorf("-nap: bad rank %q", n)
		}
		c.naps = append(c.naps, r)
	}
	if *calib == "" {
		return errors.New("-calib is required")
	}
	c.calib = strings.Split(*calib, ",")
	if *authCalib != "" {
		c.authCalib = strings.Split(*authCalib, ",")
		for _, d := range c.authCalib {
			if !slices.Contains(c.calib, d) {
				return fmt.Errorf("-auth-calib: %s is not one of the -calib corpora", d)
			}
		}
	}
	return train(ctx, c)
}

func logf(format string, a ...any) {
	fmt.Fprintf(os.Stderr, time.Now().Format("15:04:05 ")+format+"\n", a...)
}

type utt struct {
	corpus.Utterance
	vecs []float32
}

func train(ctx context.Context, c config) error {
	var def *voiceprint.Definition
	if c.from != "" {
		b, err := os.ReadFile(c.from)
		if err != nil {
			return err
		}
		def = &voiceprint.Definition{}
		if err := def.UnmarshalBinary(b); err != nil {
			return fmt.Errorf("%s: %w", c.from, err)
		}
		logf("from %s: %d components, %d nuisance directions", c.from, def.Components, def.NuisanceRank)
	} else {
		var err error
		if def, err = trainBase(c); err != nil {
			return err
		}
	}
	def.Shortlist = c.shortlist
	m, err := compile(def)
	if err != nil {
		return err
	}
	if err := calibrate(ctx, def, m, c.calib, c.authCalib); err != nil {
		return err
	}
	b, err := def.MarshalBinary()
	if err != nil {
		return err
	}
	if err := os.WriteFile(c.out, b, 0o644); err != nil {
		return err
	}
	logf("wrote %s (%d bytes)", c.out, len(b))
	return nil
}

// trainBase trains the UBM on the -corpus corpora and the nuisance
// projection, whose rank the calibration corpora choose.
func trainBase(c config) (*voiceprint.Definition, error) {
	opts := c.opts
	fx, err := features.New(opts)
	if err != nil {
		return nil, err
	}
	dim := fx.Dim()
	var utts []utt
	for _, dir := range c.corpora {
		us, err := load(dir)
		if err != nil {
			return nil, err
		}
		for _, u := range us {
			v, err := corpus.Features(u, opts)
			if err != nil {
				return nil, err
			}
			utts = append(utts, utt{u, v})
		}
	}
	var total int
	for _, u := range utts {
		total += len(u.vecs) / dim
	}
	logf("%d utterances, %d voiced frames", len(utts), total)
	step := (total + c.maxFrames - 1) / c.maxFrames
	data := make([]float32, 0, (total/step+1)*dim)
	t := 0
	for _, u := range utts {
		for i := 0; i+dim <= len(u.vecs); i += dim {
			if t%step == 0 {
				data = append(data, u.vecs[i:i+dim]...)
			}
			t++
		}
	}
	logf("UBM on %d frames", len(data)/dim)
	g := trainUBM(data, dim, c.components, c.iters, c.final, c.floor, logf)
	def := &voiceprint.Definition{
		Name:            fmt.Sprintf("telephone-gmm%d", c.components),
		Features:        opts,
		Components:      g.k,
		Dim:             dim,
		Preselect:       min(20, dim),
		Shortlist:       c.shortlist,
		Relevance:       16,
		MinVoiceSeconds: 3,
		Threshold:       0.5,
		CalibScale:      1,
		Auth: voiceprint.AuthParams{
			ConsistencyMid: 0, ConsistencySlope: 10,
			SNRMidDB: 3, SNRSlope: 1,
			ClipMid: 0.01, ClipSlope: 400,
			LoopMid: 0.5, LoopSlope: 20,
		},
		Weights:   f32(g.w),
		Means:     f32(g.mu),
		Variances: f32(g.v),
	}
	m, err := compile(def)
	if err != nil {
		return nil, err
	}
	// Nuisance directions: within-speaker scatter of per-utterance
	// supervectors.
	var sv [][]float64
	var labels []string
	for _, u := range utts {
		if len(u.vecs)/dim < 200 {
			continue
		}
		e := m.NewEnroller()
		if err := e.AddVectors(u.vecs); err != nil {
			return nil, err
		}
		v := e.Supervector(nil)
		x := make([]float64, len(v))
		for i := range v {
			x[i] = float64(v[i])
		}
		sv = append(sv, x)
		labels = append(labels, u.Split+"/"+u.Speaker)
	}
	calib, err := loadAll(c.calib)
	if err != nil {
		return nil, err
	}
	// The nuisance rank is chosen by the EER on the calibration split.
	maxRank := slices.Max(c.naps)
	basis := napBasis(sv, labels, maxRank)
	logf("nuisance: %d directions from %d utterances", maxRank, len(sv))
	bestEER, bestRank := 2.0, 0
	for _, r := range c.naps {
		def.Nuisance, def.NuisanceRank = nil, r
		for _, b := range basis[:r] {
			def.Nuisance = append(def.Nuisance, f32(b)...)
		}
		if m, err = compile(def); err != nil {
			return nil, err
		}
		v, err := trial.Verify(m, calib, 10, 3)
		if err != nil {
			return nil, err
		}
		eer, _ := trial.EER(v.Genuine, v.Impostor)
		logf("nuisance rank %d: calibration-split EER %.2f%%", r, 100*eer)
		if eer < bestEER {
			bestEER, bestRank = eer, r
		}
	}
	def.Nuisance, def.NuisanceRank = nil, bestRank
	for _, b := range basis[:bestRank] {
		def.Nuisance = append(def.Nuisance, f32(b)...)
	}
	return def, nil
}

func load(dir string) ([]corpus.Utterance, error) {
	us, err := corpus.Load(dir)
	if err != nil {
		return nil, err
	}
	for _, u := range us {
		if u.Split == "dev" || u.Split == "eval" {
			return nil, fmt.Errorf("%s: split %q must not train a model", dir, u.Split)
		}
	}
	return us, nil
}

func compile(def *voiceprint.Definition) (voiceprint.Model, error) {
	b, err := def.MarshalBinary()
	if err != nil {
		return voiceprint.Model{}, err
	}
	return voiceprint.ParseModel(b)
}

func f32(a []float64) []float32 {
	o := make([]float32, len(a))
	for i, v := range a {
		o[i] = float32(v)
	}
	return o
}
