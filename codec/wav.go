package codec

import (
	"encoding/binary"
	"fmt"
	"io"
)

// Format describes interleaved PCM audio: how each sample is coded, how many
// frames per second, and how many channels a frame holds.
type Format struct {
	Encoding   Encoding
	SampleRate int // Hz: 8000 or 16000
	Channels   int // 1 or 2
	// Frames is the number of frames (one sample of every channel) the WAV
	// data chunk declares, or -1 when its header leaves the length open, as
	// writers that cannot seek back do (see NewWAVReader). ReadWAV sets it
	// to the number of frames actually read; WriteWAV ignores it.
	Frames int64
}

// check validates f against what Earshot reads and writes.
func (f Format) check() error {
	if f.Encoding.BytesPerSample() == 0 {
		return fmt.Errorf("%w: %v", ErrUnknownEncoding, f.Encoding)
	}
	if f.Channels != 1 && f.Channels != 2 {
		return fmt.Errorf("%w: %d", ErrUnsupportedChannels, f.Channels)
	}
	if f.SampleRate != 8000 && f.SampleRate != 16000 {
		return fmt.Errorf("%w: %d", ErrUnsupportedSampleRate, f.SampleRate)
	}
	return nil
}

// WAV format tags (Microsoft's mmreg.h) and layout constants.
const (
	wavTagPCM        = 0x0001
	wavTagALaw       = 0x0006
	wavTagMuLaw      = 0x0007
	wavTagExtensible = 0xFFFE

	// wavMaxChunk bounds every chunk before the data chunk. Real headers
	// hold a fmt chunk of 16 to 40 bytes and metadata (LIST, fact, bext,
	// iXML, JUNK) of a few KB; a larger size is a broken or hostile file.
	wavMaxChunk = 1 << 20

	// wavBufSize is the size of a WAVReader's read buffer, a multiple of
	// every frame size (1, 2 and 4 bytes).
	wavBufSize = 4096

	// wavMaxEmptyReads is how many consecutive (0, nil) reads Read
	// tolerates before it reports io.ErrNoProgress.
	wavMaxEmptyReads = 100
)

// WAVReader decodes the samples of a RIFF/WAVE stream as it reads it.
//
// It understands the fmt chunk of PCM 16-bit (format tag 1), A-law (6) and
// µ-law (7), and WAVE_FORMAT_EXTENSIBLE (0xFFFE) with one of those
// subformats, at 8000 or 16000 Hz, mono or stereo. It needs no io.Seeker and
// holds a fixed 4 KiB buffer whatever the file says. A WAVReader is not safe
// for concurrent use.
type WAVReader struct {
	r          io.Reader
	format     Format
	frameBytes int   // bytes per frame
	remaining  int64 // data bytes not yet read from r, or -1 to read until EOF
	pending    int   // bytes at the start of buf not yet decoded; less than a frame between calls
	err        error // sticky: io.EOF or the error Read reports from now on
	buf        [wavBufSize]byte
}

// NewWAVReader reads the header of a WAV stream from r, up to the start of
// the samples in its data chunk, and returns a reader for those samples.
//
// Chunks other than fmt and data (LIST, fact, bext, JUNK, ...) are skipped,
// honouring the pad byte that follows an odd-sized chunk. The RIFF size is
// not used: streaming writers cannot know it. A data chunk size of 0,
// 0xFFFFFFFF (ffmpeg and others writing to a pipe) or 0x7FFFF000 (SoX writing
// to a pipe) means the samples run until the end of the stream, and
// Format().Frames is -1. The byte rate field is not checked; the block align
// must match the channels and sample size.
//
// Errors: ErrNotRIFF, ErrNotWAVE, ErrTruncatedHeader, ErrMissingFmt,
// ErrMissingData, ErrMalformedFmt, ErrChunkTooLarge (any chunk before the
// data larger than 1 MiB), ErrUnsupportedFormatTag,
// ErrUnsupportedBitsPerSample, ErrUnsupportedSampleRate,
// ErrUnsupportedChannels, or an error of r wrapped.
func NewWAVReader(r io.Reader) (*WAVReader, error) {
	w := &WAVReader{r: r}
	if err := w.readHeader(); err != nil {
		return nil, err
	}
	return w, nil
}

// Format returns the format of the stream's samples.
func (w *WAVReader) Format() Format { return w.format }

// Read decodes up to len(dst) samples into dst and returns how many it
// stored. Samples are interleaved as in the file, and n is always a whole
// number of frames (a multiple of Format().Channels), so each call's output
// can be de-interleaved on its own.
//
// Read follows io.Reader: at the end of the data it returns 0 and io.EOF.
// A stream that ends before the data chunk's declared size, but on a frame
// boundary, ends normally (writers that cannot seek back leave a placeholder
// size); one that ends inside a frame returns ErrTruncatedData. A dst shorter
// than one frame returns ErrShortBuffer. Errors of the underlying reader are
// returned wrapped, and every error but ErrShortBuffer is returned again by
// later calls. Read allocates nothing, except to build an error. A
// WAVReader not made by NewWAVReader returns ErrMissingFmt.
func (w *WAVReader) Read(dst []int16) (n int, err error) {
	if w.frameBytes == 0 {
		return 0, ErrMissingFmt
	}
	frames := len(dst) / w.format.Channels
	if frames == 0 {
		if len(dst) == 0 {
			return 0, nil
		}
		return 0, ErrShortBuffer
	}
	limit := min(frames*w.frameBytes, len(w.buf))
	empty := 0
	for {
		if whole := w.pending - w.pending%w.frameBytes; whole > 0 {
			return w.decode(dst, whole), nil
		}
		if w.err != nil {
			if w.err == io.EOF && w.pending > 0 {
				w.err = fmt.Errorf("%w: %d trailing bytes", ErrTruncatedData, w.pending)
				w.pending = 0
			}
			return 0, w.err
		}
		if w.remaining == 0 {
			w.setErr(io.EOF)
			continue
		}
		want := limit
		if w.remaining > 0 && int64(want-w.pending) > w.remaining {
			want = w.pending + int(w.remaining)
		}
		got, err := w.r.Read(w.buf[w.pending:want])
		w.pending += got
		if w.remaining > 0 {
			w.remaining -= int64(got)
		}
		switch {
		case err != nil:
			w.setErr(err)
		case got == 0:
			if empty++; empty >= wavMaxEmptyReads {
				w.setErr(io.ErrNoProgress)
			}
		default:
			empty = 0
		}
	}
}

// decode decodes the first whole bytes of buf (a whole number of frames) into
// dst, keeps the remaining partial frame, and returns the sample count.
func (w *WAVReader) decode(dst []int16, whole int) int {
	src := w.buf[:whole]
	switch w.format.Encoding {
	case MuLaw:
		AppendMuLaw(dst[:0], src)
	case ALaw:
		AppendALaw(dst[:0], src)
	default:
		// whole is even: a frame of L16 is 2 or 4 bytes.
		_, _ = AppendL16(dst[:0], src)
	}
	w.pending = copy(w.buf[:], w.buf[whole:w.pending])
	return whole / w.format.Encoding.BytesPerSample()
}

// setErr records the error that ends the stream: io.EOF, or an error of the
// underlying reader, wrapped.
func (w *WAVReader) setErr(err error) {
	if err != io.EOF {
		err = fmt.Errorf("codec: reading wav data: %w", err)
	}
	w.err = err
}

// readHeader reads the RIFF header and the chunks up to the data chunk's
// samples.
func (w *WAVReader) readHeader() error {
	b := w.buf[:12]
	n, err := io.ReadFull(w.r, b)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return fmt.Errorf("codec: reading wav header: %w", err)
	}
	if !hasPartialPrefix(b[:min(n, 4)], "RIFF") {
		return fmt.Errorf("%w: starts with %q", ErrNotRIFF, b[:min(n, 4)])
	}
	if n > 8 && !hasPartialPrefix(b[8:n], "WAVE") {
		return fmt.Errorf("%w: form type %q", ErrNotWAVE, b[8:n])
	}
	if n < 12 {
		return ErrTruncatedHeader
	}

	haveFmt := false
	for {
		id, size, err := w.readChunkHeader()
		if err == io.EOF {
			if !haveFmt {
				return ErrMissingFmt
			}
			return ErrMissingData
		}
		if err != nil {
			return err
		}
		switch string(id[:]) {
		case "data":
			if !haveFmt {
				return ErrMissingFmt
			}
			w.startData(size)
			return nil
		case "fmt ":
			if haveFmt {
				return fmt.Errorf("%w: second fmt chunk", ErrMalformedFmt)
			}
			haveFmt = true
			if err := w.readFmt(size); err != nil {
				return err
			}
		default:
			if size > wavMaxChunk {
				return fmt.Errorf("%w: %q chunk of %d bytes", ErrChunkTooLarge, string(id[:]), size)
			}
			if err := w.skip(int64(size) + int64(size&1)); err != nil {
				return err
			}
		}
	}
}

// readChunkHeader reads a chunk's id and size. It returns io.EOF only when
// the stream ends exactly before the chunk.
func (w *WAVReader) readChunkHeader() (id [4]byte, size uint32, err error) {
	b := w.buf[:8]
	if _, err := io.ReadFull(w.r, b); err != nil {
		return id, 0, headerErr(err)
	}
	return [4]byte(b), binary.LittleEndian.Uint32(b[4:]), nil
}

// readFmt reads and checks a fmt chunk of the given size.
func (w *WAVReader) readFmt(size uint32) error {
	if size < 16 {
		return fmt.Errorf("%w: %d bytes", ErrMalformedFmt, size)
	}
	if size > wavMaxChunk {
		return fmt.Errorf("%w: fmt chunk of %d bytes", ErrChunkTooLarge, size)
	}
	b := w.buf[:min(size, 40)]
	if _, err := io.ReadFull(w.r, b); err != nil {
		return truncated(headerErr(err))
	}
	if err := w.parseFmt(b); err != nil {
		return err
	}
	return w.skip(int64(size) - int64(len(b)) + int64(size&1))
}

// parseFmt checks the fields of a fmt chunk (16 to 40 bytes of it) and sets
// w.format and w.frameBytes.
func (w *WAVReader) parseFmt(b []byte) error {
	tag := binary.LittleEndian.Uint16(b[0:])
	channels := int(binary.LittleEndian.Uint16(b[2:]))
	rate := binary.LittleEndian.Uint32(b[4:])
	blockAlign := int(binary.LittleEndian.Uint16(b[12:]))
	bits := int(binary.LittleEndian.Uint16(b[14:]))

	if tag == wavTagExtensible {
		// cbSize (2 bytes), valid bits (2), channel mask (4), subformat GUID (16).
		if len(b) < 40 || binary.LittleEndian.Uint16(b[16:]) < 22 {
			return fmt.Errorf("%w: WAVE_FORMAT_EXTENSIBLE without its extension", ErrMalformedFmt)
		}
		if valid := int(binary.LittleEndian.Uint16(b[18:])); valid > bits {
			return fmt.Errorf("%w: %d valid bits in %d-bit samples", ErrMalformedFmt, valid, bits)
		}
		// The subformat GUID of a classic tag XXXX is
		// {0000XXXX-0000-0010-8000-00AA00389B71}, stored little-endian.
		guid := b[24:40]
		tail := [14]byte{0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71}
		if [14]byte(guid[2:]) != tail {
			return fmt.Errorf("%w: extensible subformat %x", ErrUnsupportedFormatTag, guid)
		}
		tag = binary.LittleEndian.Uint16(guid)
	}

	var enc Encoding
	wantBits := 8
	switch tag {
	case wavTagPCM:
		enc, wantBits = L16, 16
	case wavTagALaw:
		enc = ALaw
	case wavTagMuLaw:
		enc = MuLaw
	default:
		return fmt.Errorf("%w: 0x%04X", ErrUnsupportedFormatTag, tag)
	}
	if bits != wantBits {
		return fmt.Errorf("%w: %d-bit %v", ErrUnsupportedBitsPerSample, bits, enc)
	}
	f := Format{Encoding: enc, SampleRate: int(rate), Channels: channels, Frames: -1}
	if err := f.check(); err != nil {
		return err
	}
	if blockAlign != channels*bits/8 {
		return fmt.Errorf("%w: block align %d for %d channels of %d bits", ErrMalformedFmt, blockAlign, channels, bits)
	}
	w.format, w.frameBytes = f, blockAlign
	return nil
}

// startData prepares reading the samples of a data chunk of the given size.
func (w *WAVReader) startData(size uint32) {
	switch size {
	case 0, 0xFFFFFFFF, 0x7FFFF000:
		w.remaining, w.format.Frames = -1, -1
	default:
		w.remaining = int64(size)
		w.format.Frames = int64(size) / int64(w.frameBytes)
	}
}

// skip reads and discards n bytes of header.
func (w *WAVReader) skip(n int64) error {
	for n > 0 {
		b := w.buf[:min(n, int64(len(w.buf)))]
		if _, err := io.ReadFull(w.r, b); err != nil {
			return truncated(headerErr(err))
		}
		n -= int64(len(b))
	}
	return nil
}

// headerErr maps an io.ReadFull error inside the header: io.EOF stays (the
// caller decides whether a clean end is allowed there), a short read is a
// truncated header, anything else is the reader's own error.
func headerErr(err error) error {
	switch err {
	case io.EOF:
		return io.EOF
	case io.ErrUnexpectedEOF:
		return ErrTruncatedHeader
	}
	return fmt.Errorf("codec: reading wav header: %w", err)
}

// truncated turns io.EOF into ErrTruncatedHeader, for reads where the stream
// may not end.
func truncated(err error) error {
	if err == io.EOF {
		return ErrTruncatedHeader
	}
	return err
}

// hasPartialPrefix reports whether b is a prefix of s or s a prefix of b:
// whether the bytes seen so far agree with s.
func hasPartialPrefix(b []byte, s string) bool {
	n := min(len(b), len(s))
	return string(b[:n]) == s[:n]
}
