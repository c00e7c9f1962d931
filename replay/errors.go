package replay

import "errors"

var (
	// ErrNoFiles is returned by New when Options.Files is empty.
	ErrNoFiles = errors.New("replay: no files to replay")
	// ErrFileType is a file that is neither WAV nor raw µ-law.
	ErrFileType = errors.New("replay: unknown file type (want .wav, .ulaw, .ul, .mulaw or .raw)")
	// ErrFileFormat is a WAV file Earshot cannot stream (sample rate,
	// channels, encoding) or a raw file that is not whole frames.
	ErrFileFormat = errors.New("replay: unsupported audio")
	// ErrEmptyFile is a file without a single sample.
	ErrEmptyFile = errors.New("replay: file holds no audio")
	// ErrOptions is an invalid option.
	ErrOptions = errors.New("replay: invalid options")
)
