package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/earshot-voice/earshot/eval"
	"github.com/earshot-voice/earshot/voiceprint"
)

// evalCommand runs earshot eval: flags in, package eval does the work,
// the report out (text on stdout, JSON to --json).
func evalCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("earshot eval", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: earshot eval --corpus DIR [--corpus DIR …] [--json FILE] [--model HASH | --model-file FILE]\n\n"+
			"Measures the audio path on labelled corpora (format and protocol in docs/EVALUATION.md):\n"+
			"VAD frame precision/recall/F1, speaker-verification EER, authenticity of genuine,\n"+
			"two-speaker and looped collections, each also by source (real, synthetic voices), and\n"+
			"× real time. Several corpora are measured together, their speakers kept apart.\n\nflags:")
		fs.PrintDefaults()
	}
	var (
		dirs           stringList
		jsonFile, hash string
	)
	fs.Var(&dirs, "corpus", "corpus directory (manifest.csv, speakers.csv, calls.csv); repeat for several")
	fs.StringVar(&jsonFile, "json", "", "also write the figures as JSON to this file")
	fs.StringVar(&hash, "model", "", "model_hash of the speaker model to measure (default: the first built-in model)")
	var modelFile string
	fs.StringVar(&modelFile, "model-file", "", "measure this model file (the training command's output) instead of a built-in model")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if len(dirs) == 0 || fs.NArg() > 0 {
		fs.Usage()
		return errors.New("eval needs --corpus DIR and no arguments")
	}
	reg := voiceprint.NewRegistry()
	var model voiceprint.Model
	switch {
	case modelFile != "" && hash != "":
		return errors.New("eval: --model and --model-file exclude each other")
	case modelFile != "":
		data, err := os.ReadFile(modelFile)
		if err != nil {
			return fmt.Errorf("eval: %w", err)
		}
		if model, err = voiceprint.ParseModel(data); err != nil {
			return fmt.Errorf("eval: %s: %w", modelFile, err)
		}
	case hash == "":
		models := reg.Models()
		if len(models) == 0 {
			return errors.New("eval: this build has no speaker model")
		}
		model = models[0]
	default:
		var ok bool
		if model, ok = reg.Lookup(hash); !ok {
			return fmt.Errorf("eval: no built-in model has hash %q", hash)
		}
	}
	corpora := make([]*eval.Corpus, 0, len(dirs))
	for _, dir := range dirs {
		c, err := eval.Load(dir)
		if err != nil {
			return err
		}
		corpora = append(corpora, c)
	}
	corpus := eval.Merge(corpora...)
	opts := eval.Options{Model: model}
	opts.Progress = stderr
	if isTerminal(stderr) {
		opts.ProgressBar = true
	}
	rep, err := eval.Run(ctx, corpus, opts)
	if err != nil {
		return err
	}
	if err := rep.WriteText(stdout); err != nil {
		return err
	}
	if jsonFile != "" {
		if err := writeJSONFile(jsonFile, rep); err != nil {
			return err
		}
	}
	return nil
}

// stringList is a flag that may be repeated; each use appends a value.
type stringList []string

func (l *stringList) String() string { return strings.Join(*l, ",") }

func (l *stringList) Set(v string) error {
	if v == "" {
		return errors.New("empty value")
	}
	*l = append(*l, v)
	return nil
}
