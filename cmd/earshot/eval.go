package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/earshot-voice/earshot/eval"
	"github.com/earshot-voice/earshot/voiceprint"
)

// evalCommand runs earshot eval: flags in, package eval does the work,
// the report out (text on stdout, JSON to --json).
func evalCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("earshot eval", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: earshot eval --corpus DIR [--json FILE] [--model HASH]\n\n"+
			"Measures the audio path on a labelled corpus made by make-corpus.sh (format and protocol in\n"+
			"docs/EVALUATION.md): VAD frame precision/recall/F1, speaker-verification EER, authenticity\n"+
			"of genuine, two-speaker and looped collections, and × real time.\n\nflags:")
		fs.PrintDefaults()
	}
	var (
		dir, jsonFile, hash string
	)
	fs.StringVar(&dir, "corpus", "", "corpus directory (manifest.csv, speakers.csv, calls.csv)")
	fs.StringVar(&jsonFile, "json", "", "also write the figures as JSON to this file")
	fs.StringVar(&hash, "model", "", "model_hash of the speaker model to measure (default: the first built-in model)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if dir == "" || fs.NArg() > 0 {
		fs.Usage()
		return errors.New("eval needs --corpus DIR and no arguments")
	}
	reg := voiceprint.NewRegistry()
	var model voiceprint.Model
	if hash == "" {
		models := reg.Models()
		if len(models) == 0 {
			return errors.New("eval: this build has no speaker model")
		}
		model = models[0]
	} else {
		var ok bool
		if model, ok = reg.Lookup(hash); !ok {
			return fmt.Errorf("eval: no built-in model has hash %q", hash)
		}
	}
	corpus, err := eval.Load(dir)
	if err != nil {
		return err
	}
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
