package codec

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
)

// ReadWAV reads a whole WAV stream and returns its format and its
// interleaved samples. It reads at most maxSamples samples (counting every
// channel): a longer stream returns ErrTooLong, and the returned slice never
// has a capacity beyond maxSamples, whatever the header declares. The
// returned Format's Frames is the number of frames read. Other errors are
// those of NewWAVReader and WAVReader.Read; an error after the header still
// returns the header's Format, so that a caller can say what it refused.
func ReadWAV(r io.Reader, maxSamples int) (Format, []int16, error) {
	wr, err := NewWAVReader(r)
	if err != nil {
		return Format{}, nil, err
	}
	f := wr.Format()
	limit := max(maxSamples, 0)
	limit -= limit % f.Channels
	capacity := min(limit, 1<<16)
	if f.Frames >= 0 {
		capacity = int(min(int64(limit), f.Frames*int64(f.Channels)))
	}
	samples := make([]int16, 0, capacity)
	for {
		if len(samples) == cap(samples) {
			if len(samples) == limit {
				// Full: one more frame is one too many. Read returns
				// samples or an error, never neither.
				var probe [2]int16
				n, err := wr.Read(probe[:f.Channels])
				if n > 0 {
					return f, nil, fmt.Errorf("%w: more than %d samples", ErrTooLong, maxSamples)
				}
				if err == io.EOF {
					break
				}
				return f, nil, err
			}
			grown := make([]int16, len(samples), min(limit, 2*cap(samples)+1024))
			copy(grown, samples)
			samples = grown
		}
		n, err := wr.Read(samples[len(samples):cap(samples)])
		samples = samples[:len(samples)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return f, nil, err
		}
	}
	f.Frames = int64(len(samples) / f.Channels)
	return f, samples, nil
}

// WriteWAV writes samples, interleaved with f.Channels channels, to w as a
// WAV file in f.Encoding at f.SampleRate. L16 becomes PCM 16-bit (format tag
// 1, the canonical 44-byte header); MuLaw and ALaw become format tags 7 and
// 6 with the fmt extension size and fact chunk the specification asks of
// non-PCM formats. f.Frames is ignored.
//
// It accepts exactly what NewWAVReader accepts (8000 or 16000 Hz, 1 or 2
// channels), so what it writes reads back. Errors: ErrUnknownEncoding,
// ErrUnsupportedSampleRate, ErrUnsupportedChannels, ErrPartialFrame (samples
// not a whole number of frames), ErrTooLong (beyond the 4 GiB a RIFF file can
// hold), or the first error of w.
func WriteWAV(w io.Writer, f Format, samples []int16) error {
	if err := f.check(); err != nil {
		return err
	}
	if len(samples)%f.Channels != 0 {
		return ErrPartialFrame
	}
	bps := f.Encoding.BytesPerSample()
	dataSize := uint64(len(samples)) * uint64(bps)
	pad := dataSize & 1

	var hdr [58]byte
	h := hdr[:0]
	h = append(h, "RIFF\x00\x00\x00\x00WAVEfmt "...)
	tag, fmtSize := uint16(wavTagPCM), uint32(16)
	switch f.Encoding {
	case MuLaw:
		tag, fmtSize = wavTagMuLaw, 18
	case ALaw:
		tag, fmtSize = wavTagALaw, 18
	}
	h = binary.LittleEndian.AppendUint32(h, fmtSize)
	h = binary.LittleEndian.AppendUint16(h, tag)
	h = binary.LittleEndian.AppendUint16(h, uint16(f.Channels))
	h = binary.LittleEndian.AppendUint32(h, uint32(f.SampleRate))
	h = binary.LittleEndian.AppendUint32(h, uint32(f.SampleRate*f.Channels*bps))
	h = binary.LittleEndian.AppendUint16(h, uint16(f.Channels*bps))
	h = binary.LittleEndian.AppendUint16(h, uint16(8*bps))
	if fmtSize == 18 {
		h = binary.LittleEndian.AppendUint16(h, 0) // cbSize: no extension
		h = append(h, "fact"...)
		h = binary.LittleEndian.AppendUint32(h, 4)
		h = binary.LittleEndian.AppendUint32(h, uint32(len(samples)/f.Channels))
	}
	h = append(h, "data"...)
	h = binary.LittleEndian.AppendUint32(h, uint32(dataSize))
	riffSize := uint64(len(h)) - 8 + dataSize + pad
	if riffSize > math.MaxUint32 {
		return fmt.Errorf("%w: %d bytes of samples", ErrTooLong, dataSize)
	}
	binary.LittleEndian.PutUint32(h[4:], uint32(riffSize))
	if _, err := w.Write(h); err != nil {
		return err
	}

	buf := make([]byte, 0, wavBufSize)
	for step := wavBufSize / bps; len(samples) > 0; {
		chunk := samples[:min(step, len(samples))]
		samples = samples[len(chunk):]
		buf, _ = AppendEncode(f.Encoding, buf[:0], chunk)
		if _, err := w.Write(buf); err != nil {
			return err
		}
	}
	if pad != 0 {
		if _, err := w.Write([]byte{0}); err != nil {
			return err
		}
	}
	return nil
}
