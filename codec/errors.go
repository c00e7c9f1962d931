package codec

import "errors"

// Errors of the frame functions. They are returned as they are, so callers
// may compare with == as well as errors.Is.
var (
	// ErrOddLength reports 16-bit PCM input with an odd number of bytes.
	ErrOddLength = errors.New("codec: odd byte count for 16-bit samples")
	// ErrPartialFrame reports interleaved input that does not hold a whole
	// number of frames (one sample of every channel).
	ErrPartialFrame = errors.New("codec: length is not a whole number of frames")
	// ErrChannelCount reports a channel count below one.
	ErrChannelCount = errors.New("codec: channel count must be at least 1")
	// ErrChannelIndex reports a channel index outside [0, channels).
	ErrChannelIndex = errors.New("codec: channel index out of range")
	// ErrUnknownEncoding reports an Encoding value or name this package does
	// not know.
	ErrUnknownEncoding = errors.New("codec: unknown encoding")
)

// Errors of WAV reading and writing. Most are wrapped with the offending
// value (for example "codec: unsupported sample rate: 44100"); test them with
// errors.Is. The message is fit to show to the API client that sent the file.
var (
	// ErrNotRIFF reports a stream that does not start with "RIFF" (RIFX,
	// RF64 and non-WAV files).
	ErrNotRIFF = errors.New("codec: not a RIFF file")
	// ErrNotWAVE reports a RIFF file whose form type is not "WAVE".
	ErrNotWAVE = errors.New("codec: RIFF form is not WAVE")
	// ErrTruncatedHeader reports a stream that ends inside the RIFF header or
	// inside a chunk before the data chunk.
	ErrTruncatedHeader = errors.New("codec: wav header truncated")
	// ErrMissingFmt reports a data chunk, or the end of the stream, before
	// any fmt chunk.
	ErrMissingFmt = errors.New("codec: wav has no fmt chunk before its data")
	// ErrMissingData reports a stream that ends after its fmt chunk without
	// a data chunk.
	ErrMissingData = errors.New("codec: wav has no data chunk")
	// ErrMalformedFmt reports a fmt chunk that is too short, repeated, or
	// inconsistent (block align that does not match channels and bits).
	ErrMalformedFmt = errors.New("codec: malformed wav fmt chunk")
	// ErrChunkTooLarge reports a chunk before the data whose declared size
	// is beyond any sensible WAV header (see NewWAVReader).
	ErrChunkTooLarge = errors.New("codec: wav chunk too large")
	// ErrUnsupportedFormatTag reports a WAV format tag (or extensible
	// subformat) other than PCM (1), A-law (6) and µ-law (7).
	ErrUnsupportedFormatTag = errors.New("codec: unsupported wav format tag")
	// ErrUnsupportedBitsPerSample reports a sample size other than 16 bits
	// for PCM or 8 bits for G.711.
	ErrUnsupportedBitsPerSample = errors.New("codec: unsupported bits per sample")
	// ErrUnsupportedSampleRate reports a sample rate other than 8000 or
	// 16000 Hz.
	ErrUnsupportedSampleRate = errors.New("codec: unsupported sample rate")
	// ErrUnsupportedChannels reports a WAV channel count other than 1 or 2.
	ErrUnsupportedChannels = errors.New("codec: unsupported channel count")
	// ErrTruncatedData reports a data chunk that ends inside a sample frame.
	ErrTruncatedData = errors.New("codec: wav data ends inside a sample frame")
	// ErrTooLong reports audio longer than the caller's limit (ReadWAV) or
	// than a WAV file can describe (WriteWAV).
	ErrTooLong = errors.New("codec: audio too long")
	// ErrShortBuffer reports a WAVReader.Read buffer too short to hold one
	// sample frame.
	ErrShortBuffer = errors.New("codec: buffer shorter than one frame")
)
