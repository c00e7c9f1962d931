package vad

import "errors"

// Errors returned by New and the Process methods. They are returned as they
// are, so callers may compare with == as well as errors.Is.
var (
	// ErrSampleRate reports an Options.SampleRate other than 0, 8000 or 16000.
	ErrSampleRate = errors.New("vad: unsupported sample rate")
	// ErrFrameSize reports a frame that is not exactly 10 ms long (80
	// samples at 8 kHz, 160 at 16 kHz), or a reference frame whose length
	// differs from the frame's.
	ErrFrameSize = errors.New("vad: frame is not 10 ms long")
)
