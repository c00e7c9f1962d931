// Package eval measures Earshot's audio path on a labelled corpus, as
// earshot eval does: the voice
// activity decisions against ground-truth speech segments, speaker
// verification (equal error rate), authenticity on genuine, two-speaker and
// looped collections, and the speed of the per-call pipeline.
//
// It exists so that the figures the project reports come from the code the
// service runs: every piece of audio goes through pipeline.Pipeline (decode,
// VAD, MFCC with the model's feature options) into the model's
// voiceprint.Enroller, exactly as a register session is fed, and trials are
// scored by the model's voiceprint.Verifier. Nothing here re-implements a
// stage.
//
// Load reads a labelled corpus
// (manifest.csv, speakers.csv, calls.csv, calls/*.segments.csv; the format
// and the measuring protocol are in docs/EVALUATION.md); Run measures it on
// a few worker goroutines and returns a Report, deterministic apart from its
// timings.
package eval
