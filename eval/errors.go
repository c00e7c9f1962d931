package eval

import "errors"

// Sentinel errors. Errors about a corpus file wrap ErrCorpus with the file,
// the line and the column at fault.
var (
	// ErrCorpus: a manifest file is missing, malformed, or inconsistent with
	// the others (a speaker without a base voice, a duplicate utterance).
	ErrCorpus = errors.New("eval: malformed corpus")
	// ErrAudio: an audio file named by the manifest cannot be read or has
	// a format the pipeline does not take.
	ErrAudio = errors.New("eval: unreadable audio")
	// ErrNoScores: an equal error rate needs genuine and impostor scores.
	ErrNoScores = errors.New("eval: no genuine or no impostor scores")
)
