package codec

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"testing"
	"testing/iotest"
)

var (
	pcmMono8k    = fmtChunk(wavTagPCM, 1, 8000, 16)
	pcmStereo16k = fmtChunk(wavTagPCM, 2, 16000, 16)
	muLawMono8k  = chunk("fmt ", append(fmtBody(wavTagMuLaw, 1, 8000, 1, 8), 0, 0)) // cbSize 0, as SoX writes
	aLawStereo8k = chunk("fmt ", append(fmtBody(wavTagALaw, 2, 8000, 2, 8), 0, 0))
	factChunk    = chunk("fact", []byte{3, 0, 0, 0})
	listChunk    = chunk("LIST", []byte("INFOISFT\x05\x00\x00\x00sox1\x00")) // 17 bytes: padded
)

// wavHeaderErrorCases are streams NewWAVReader must reject.
var wavHeaderErrorCases = []struct {
	name    string
	data    []byte
	wantErr error
}{
	{"empty", nil, ErrTruncatedHeader},
	{"three bytes of RIFF", []byte("RIF"), ErrTruncatedHeader},
	{"RIFF and part of the size", []byte("RIFF\x10\x00"), ErrTruncatedHeader},
	{"form cut short", []byte("RIFF\x04\x00\x00\x00WAV"), ErrTruncatedHeader},
	{"RIFX", append([]byte("RIFX"), riff("WAVE", pcmMono8k)[4:]...), ErrNotRIFF},
	{"RF64", append([]byte("RF64"), riff("WAVE", pcmMono8k)[4:]...), ErrNotRIFF},
	{"MP3 with ID3", []byte("ID3\x04\x00\x00\x00\x00\x00\x00\xff\xfb"), ErrNotRIFF},
	{"one wrong byte", []byte("X"), ErrNotRIFF},
	{"AVI", riff("AVI ", chunk("LIST", nil)), ErrNotWAVE},
	{"form wrong in its first bytes", []byte("RIFF\x04\x00\x00\x00WB"), ErrNotWAVE},
	{"WAVE and nothing", riff("WAVE"), ErrMissingFmt},
	{"data before fmt", riff("WAVE", chunk("data", le16(1)), pcmMono8k), ErrMissingFmt},
	{"only metadata", riff("WAVE", listChunk), ErrMissingFmt},
	{"fmt and no data", riff("WAVE", pcmMono8k), ErrMissingData},
	{"fmt, LIST and no data", riff("WAVE", pcmMono8k, listChunk), ErrMissingData},
	{"chunk header cut", riff("WAVE", []byte("fmt \x10\x00")), ErrTruncatedHeader},
	{"fmt body cut", riff("WAVE", sizedChunk("fmt ", 16, fmtBody(wavTagPCM, 1, 8000, 2, 16)[:10])), ErrTruncatedHeader},
	{"fmt body missing", riff("WAVE", sizedChunk("fmt ", 16, nil)), ErrTruncatedHeader},
	{"fmt extra bytes cut", riff("WAVE", sizedChunk("fmt ", 50, append(fmtBody(wavTagPCM, 1, 8000, 2, 16), 0, 0))), ErrTruncatedHeader},
	{"skipped chunk cut", riff("WAVE", pcmMono8k, sizedChunk("LIST", 100, make([]byte, 10))), ErrTruncatedHeader},
	{"odd chunk without its pad", riff("WAVE", pcmMono8k, sizedChunk("LIST", 3, []byte("abc"))), ErrTruncatedHeader},
	{"fmt too short", riff("WAVE", chunk("fmt ", fmtBody(wavTagPCM, 1, 8000, 2, 16)[:14]), chunk("data", nil)), ErrMalformedFmt},
	{"two fmt chunks", riff("WAVE", pcmMono8k, pcmMono8k, chunk("data", nil)), ErrMalformedFmt},
	{"block align wrong", riff("WAVE", chunk("fmt ", fmtBody(wavTagPCM, 2, 8000, 2, 16)), chunk("data", nil)), ErrMalformedFmt},
	{"extensible without extension", riff("WAVE", chunk("fmt ", append(fmtBody(wavTagExtensible, 1, 8000, 2, 16), 0, 0)), chunk("data", nil)), ErrMalformedFmt},
	{"extensible cbSize too small", riff("WAVE", chunk("fmt ", func() []byte { b := extBody(wavTagPCM, 1, 8000, 16, 16); b[16] = 10; return b }()), chunk("data", nil)), ErrMalformedFmt},
	{"extensible valid bits above container", riff("WAVE", chunk("fmt ", extBody(wavTagPCM, 1, 8000, 16, 20)), chunk("data", nil)), ErrMalformedFmt},
	{"huge LIST", riff("WAVE", pcmMono8k, sizedChunk("LIST", 2<<20, nil)), ErrChunkTooLarge},
	{"huge fmt", riff("WAVE", sizedChunk("fmt ", 0xFFFFFFF0, fmtBody(wavTagPCM, 1, 8000, 2, 16))), ErrChunkTooLarge},
	{"IEEE float", riff("WAVE", fmtChunk(3, 1, 8000, 32), chunk("data", nil)), ErrUnsupportedFormatTag},
	{"MS ADPCM", riff("WAVE", fmtChunk(2, 1, 8000, 4), chunk("data", nil)), ErrUnsupportedFormatTag},
	{"extensible float", riff("WAVE", chunk("fmt ", extBody(3, 1, 8000, 32, 32)), chunk("data", nil)), ErrUnsupportedFormatTag},
	{"extensible foreign GUID", riff("WAVE", chunk("fmt ", func() []byte { b := extBody(wavTagPCM, 1, 8000, 16, 16); b[39] = 0; return b }()), chunk("data", nil)), ErrUnsupportedFormatTag},
	{"PCM 8-bit", riff("WAVE", fmtChunk(wavTagPCM, 1, 8000, 8), chunk("data", nil)), ErrUnsupportedBitsPerSample},
	{"PCM 24-bit", riff("WAVE", fmtChunk(wavTagPCM, 1, 8000, 24), chunk("data", nil)), ErrUnsupportedBitsPerSample},
	{"mu-law 16-bit", riff("WAVE", fmtChunk(wavTagMuLaw, 1, 8000, 16), chunk("data", nil)), ErrUnsupportedBitsPerSample},
	{"extensible A-law 16-bit", riff("WAVE", chunk("fmt ", extBody(wavTagALaw, 1, 8000, 16, 16)), chunk("data", nil)), ErrUnsupportedBitsPerSample},
	{"44.1 kHz", riff("WAVE", fmtChunk(wavTagPCM, 1, 44100, 16), chunk("data", nil)), ErrUnsupportedSampleRate},
	{"11025 Hz mu-law", riff("WAVE", fmtChunk(wavTagMuLaw, 1, 11025, 8), chunk("data", nil)), ErrUnsupportedSampleRate},
	{"0 Hz", riff("WAVE", fmtChunk(wavTagPCM, 1, 0, 16), chunk("data", nil)), ErrUnsupportedSampleRate},
	{"rate above int32", riff("WAVE", fmtChunk(wavTagPCM, 1, 0xFFFFFFFF, 16), chunk("data", nil)), ErrUnsupportedSampleRate},
	{"no channels", riff("WAVE", fmtChunk(wavTagPCM, 0, 8000, 16), chunk("data", nil)), ErrUnsupportedChannels},
	{"three channels", riff("WAVE", fmtChunk(wavTagPCM, 3, 8000, 16), chunk("data", nil)), ErrUnsupportedChannels},
}

func TestNewWAVReaderErrors(t *testing.T) {
	for _, tt := range wavHeaderErrorCases {
		t.Run(tt.name, func(t *testing.T) {
			r, err := NewWAVReader(bytes.NewReader(tt.data))
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("error %v, want %v", err, tt.wantErr)
			}
			if r != nil {
				t.Errorf("reader %v returned with error", r)
			}
		})
	}
}

func TestNewWAVReaderReaderError(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name string
		r    io.Reader
	}{
		{"at once", iotest.ErrReader(boom)},
		{"in a chunk header", io.MultiReader(bytes.NewReader(riff("WAVE")[:14]), iotest.ErrReader(boom))},
		{"while skipping", io.MultiReader(bytes.NewReader(riff("WAVE", pcmMono8k, sizedChunk("LIST", 64, nil))), iotest.ErrReader(boom))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := NewWAVReader(tt.r); !errors.Is(err, boom) {
				t.Errorf("error %v, want it to wrap %v", err, boom)
			}
		})
	}
}

// wavReadCases are valid streams with the format and samples they hold.
var wavReadCases = []struct {
	name   string
	data   []byte
	format Format
	want   []int16
}{
	{"canonical PCM mono", riff("WAVE", pcmMono8k, chunk("data", le16(1, -2, 32767, -32768))),
		Format{L16, 8000, 1, 4}, []int16{1, -2, 32767, -32768}},
	{"PCM stereo 16 kHz", riff("WAVE", pcmStereo16k, chunk("data", le16(1, -1, 2, -2))),
		Format{L16, 16000, 2, 2}, []int16{1, -1, 2, -2}},
	{"mu-law with cbSize and fact", riff("WAVE", muLawMono8k, factChunk, chunk("data", []byte{0x80, 0xFF, 0x00})),
		Format{MuLaw, 8000, 1, 3}, []int16{32124, 0, -32124}},
	{"A-law stereo", riff("WAVE", aLawStereo8k, factChunk, chunk("data", []byte{0xD5, 0x55, 0xAA, 0x2A})),
		Format{ALaw, 8000, 2, 2}, []int16{8, -8, 32256, -32256}},
	{"fmt with extra bytes", riff("WAVE", chunk("fmt ", append(fmtBody(wavTagPCM, 1, 8000, 2, 16), 0, 0, 0xAB, 0xCD)), chunk("data", le16(5))),
		Format{L16, 8000, 1, 1}, []int16{5}},
	{"odd chunks padded around fmt", riff("WAVE", listChunk, pcmMono8k, chunk("bext", []byte{1, 2, 3}), chunk("data", le16(7, 8))),
		Format{L16, 8000, 1, 2}, []int16{7, 8}},
	{"chunk after data is not audio", riff("WAVE", pcmMono8k, chunk("data", le16(7)), listChunk),
		Format{L16, 8000, 1, 1}, []int16{7}},
	{"odd mu-law data, pad and LIST after it", riff("WAVE", muLawMono8k, chunk("data", []byte{0x80, 0x80, 0x80}), listChunk),
		Format{MuLaw, 8000, 1, 3}, []int16{32124, 32124, 32124}},
	{"empty data", riff("WAVE", pcmMono8k, chunk("data", nil)),
		Format{L16, 8000, 1, -1}, []int16{}},
	{"data size 0 streams to EOF", riff("WAVE", pcmMono8k, sizedChunk("data", 0, le16(1, 2, 3))),
		Format{L16, 8000, 1, -1}, []int16{1, 2, 3}},
	{"data size 0xFFFFFFFF streams to EOF", riff("WAVE", pcmStereo16k, sizedChunk("data", 0xFFFFFFFF, le16(1, 2, 3, 4))),
		Format{L16, 16000, 2, -1}, []int16{1, 2, 3, 4}},
	{"SoX pipe placeholder streams to EOF", riff("WAVE", pcmMono8k, sizedChunk("data", 0x7FFFF000, le16(9))),
		Format{L16, 8000, 1, -1}, []int16{9}},
	{"data shorter than declared ends on a frame", riff("WAVE", pcmStereo16k, sizedChunk("data", 400, le16(1, 2, 3, 4))),
		Format{L16, 16000, 2, 100}, []int16{1, 2, 3, 4}},
	{"extensible PCM stereo", riff("WAVE", chunk("fmt ", extBody(wavTagPCM, 2, 16000, 16, 16)), chunk("data", le16(3, -3))),
		Format{L16, 16000, 2, 1}, []int16{3, -3}},
	{"extensible PCM 12 valid bits", riff("WAVE", chunk("fmt ", extBody(wavTagPCM, 1, 8000, 16, 12)), chunk("data", le16(16, -16))),
		Format{L16, 8000, 1, 2}, []int16{16, -16}},
	{"extensible mu-law", riff("WAVE", chunk("fmt ", extBody(wavTagMuLaw, 1, 8000, 8, 8)), factChunk, chunk("data", []byte{0x80, 0x00})),
		Format{MuLaw, 8000, 1, 2}, []int16{32124, -32124}},
	{"extensible A-law", riff("WAVE", chunk("fmt ", extBody(wavTagALaw, 2, 8000, 8, 0)), chunk("data", []byte{0xD5, 0x55})),
		Format{ALaw, 8000, 2, 1}, []int16{8, -8}},
	{"RIFF size zero is ignored", func() []byte { b := riff("WAVE", pcmMono8k, chunk("data", le16(4))); b[4], b[5] = 0, 0; return b }(),
		Format{L16, 8000, 1, 1}, []int16{4}},
}

func TestWAVReader(t *testing.T) {
	for _, tt := range wavReadCases {
		t.Run(tt.name, func(t *testing.T) {
			// The same samples, however the stream and dst are cut.
			sources := []struct {
				name string
				r    func() io.Reader
				dst  int
			}{
				{"whole", func() io.Reader { return bytes.NewReader(tt.data) }, 4096},
				{"one frame at a time", func() io.Reader { return bytes.NewReader(tt.data) }, tt.format.Channels},
				{"odd dst", func() io.Reader { return bytes.NewReader(tt.data) }, 3},
				{"one byte reads", func() io.Reader { return iotest.OneByteReader(bytes.NewReader(tt.data)) }, 5},
				{"half reads", func() io.Reader { return iotest.HalfReader(bytes.NewReader(tt.data)) }, 64},
				{"EOF with the data", func() io.Reader { return iotest.DataErrReader(bytes.NewReader(tt.data)) }, 2},
			}
			for _, src := range sources {
				r, err := NewWAVReader(src.r())
				if err != nil {
					t.Fatalf("%s: %v", src.name, err)
				}
				if got := r.Format(); got != tt.format {
					t.Errorf("%s: format %+v, want %+v", src.name, got, tt.format)
				}
				got, err := readAll(r, src.dst)
				if err != nil {
					t.Fatalf("%s: %v", src.name, err)
				}
				if !slices.Equal(got, tt.want) {
					t.Errorf("%s: samples %v, want %v", src.name, got, tt.want)
				}
			}
		})
	}
}

// readAll reads r to the end with a dst of n samples, checking that every
// read returns whole frames.
func readAll(r *WAVReader, n int) ([]int16, error) {
	got := []int16{}
	buf := make([]int16, n)
	for {
		k, err := r.Read(buf)
		if k%r.Format().Channels != 0 {
			return got, fmt.Errorf("read %d samples, not whole frames", k)
		}
		got = append(got, buf[:k]...)
		if err == io.EOF {
			return got, nil
		}
		if err != nil {
			return got, err
		}
	}
}

func TestWAVReaderReadErrors(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name    string
		r       io.Reader
		want    []int16 // samples before the error
		wantErr error
	}{
		{"PCM ends inside a sample", bytes.NewReader(riff("WAVE", pcmMono8k, sizedChunk("data", 5, []byte{1, 0, 2, 0, 3}))),
			[]int16{1, 2}, ErrTruncatedData},
		{"stereo streaming ends inside a frame", bytes.NewReader(riff("WAVE", pcmStereo16k, sizedChunk("data", 0xFFFFFFFF, le16(1, 2, 3)))),
			[]int16{1, 2}, ErrTruncatedData},
		{"stereo mu-law ends inside a frame", bytes.NewReader(riff("WAVE", fmtChunk(wavTagMuLaw, 2, 8000, 8), sizedChunk("data", 0, []byte{0xFF, 0xFF, 0xFF}))),
			[]int16{0, 0}, ErrTruncatedData},
		{"declared size cut inside a frame", bytes.NewReader(riff("WAVE", pcmStereo16k, sizedChunk("data", 100, le16(1, 2, 3)))),
			[]int16{1, 2}, ErrTruncatedData},
		{"reader fails inside the data", io.MultiReader(bytes.NewReader(riff("WAVE", pcmMono8k, sizedChunk("data", 100, le16(1, 2)))), iotest.ErrReader(boom)),
			[]int16{1, 2}, boom},
		{"reader makes no progress", io.MultiReader(bytes.NewReader(riff("WAVE", pcmMono8k, sizedChunk("data", 100, le16(1)))), emptyReader{}),
			[]int16{1}, io.ErrNoProgress},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := NewWAVReader(tt.r)
			if err != nil {
				t.Fatal(err)
			}
			got, err := readAll(r, 64)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("error %v, want %v", err, tt.wantErr)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("samples %v, want %v", got, tt.want)
			}
			if n, again := r.Read(make([]int16, 8)); n != 0 || again != err {
				t.Errorf("next Read = %d, %v; want the same error again", n, again)
			}
		})
	}
}

// emptyReader returns (0, nil) for ever.
type emptyReader struct{}

func (emptyReader) Read([]byte) (int, error) { return 0, nil }

func TestWAVReaderShortBuffer(t *testing.T) {
	data := riff("WAVE", pcmStereo16k, chunk("data", le16(1, 2)))
	r, err := NewWAVReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		dst     []int16
		wantN   int
		wantErr error
	}{
		{"empty dst", nil, 0, nil},
		{"half a frame", make([]int16, 1), 0, ErrShortBuffer},
		{"a frame", make([]int16, 2), 2, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := r.Read(tt.dst)
			if n != tt.wantN || !errors.Is(err, tt.wantErr) {
				t.Errorf("Read = %d, %v; want %d, %v", n, err, tt.wantN, tt.wantErr)
			}
		})
	}
}

func TestWAVReaderZero(t *testing.T) {
	var r WAVReader
	if n, err := r.Read(make([]int16, 4)); n != 0 || !errors.Is(err, ErrMissingFmt) {
		t.Errorf("zero WAVReader: Read = %d, %v; want 0, ErrMissingFmt", n, err)
	}
}

func TestReadWAV(t *testing.T) {
	stereo := riff("WAVE", pcmStereo16k, chunk("data", le16(1, 2, 3, 4, 5, 6)))
	streaming := riff("WAVE", pcmStereo16k, sizedChunk("data", 0xFFFFFFFF, le16(1, 2, 3, 4, 5, 6)))
	lying := riff("WAVE", pcmMono8k, sizedChunk("data", 0xFFFFFFF0, le16(1, 2, 3)))
	tests := []struct {
		name    string
		data    []byte
		max     int
		want    []int16
		wantErr error
	}{
		{"under the limit", stereo, 100, []int16{1, 2, 3, 4, 5, 6}, nil},
		{"exactly the limit", stereo, 6, []int16{1, 2, 3, 4, 5, 6}, nil},
		{"limit not a whole frame", stereo, 7, []int16{1, 2, 3, 4, 5, 6}, nil},
		{"one frame over", stereo, 5, nil, ErrTooLong},
		{"streaming exactly the limit", streaming, 6, []int16{1, 2, 3, 4, 5, 6}, nil},
		{"streaming over", streaming, 4, nil, ErrTooLong},
		{"zero limit", stereo, 0, nil, ErrTooLong},
		{"negative limit", stereo, -1, nil, ErrTooLong},
		{"zero limit, no data", riff("WAVE", pcmMono8k, chunk("data", nil)), 0, []int16{}, nil},
		{"header claims 4 GiB", lying, 1000, []int16{1, 2, 3}, nil},
		{"header error", riff("WAVE"), 1000, nil, ErrMissingFmt},
		{"data error after the limit", riff("WAVE", pcmMono8k, sizedChunk("data", 7, []byte{1, 0, 2, 0, 3, 0, 4})), 3, nil, ErrTruncatedData},
		{"data error", riff("WAVE", pcmMono8k, sizedChunk("data", 3, []byte{1, 0, 2})), 1000, nil, ErrTruncatedData},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, got, err := ReadWAV(bytes.NewReader(tt.data), tt.max)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("error %v, want %v", err, tt.wantErr)
			}
			if !slices.Equal(got, tt.want) || (got == nil) != (tt.want == nil) {
				t.Errorf("samples %v, want %v", got, tt.want)
			}
			if cap(got) > max(tt.max, 0) {
				t.Errorf("capacity %d beyond the limit %d", cap(got), tt.max)
			}
			if err == nil && f.Frames != int64(len(got)/f.Channels) {
				t.Errorf("Frames %d, read %d samples of %d channels", f.Frames, len(got), f.Channels)
			}
		})
	}
	t.Run("grows past its first guess", func(t *testing.T) {
		samples := make([]int16, 200000)
		for i := range samples {
			samples[i] = int16(i)
		}
		data := riff("WAVE", pcmMono8k, sizedChunk("data", 0, le16(samples...)))
		_, got, err := ReadWAV(bytes.NewReader(data), len(samples))
		if err != nil || !slices.Equal(got, samples) {
			t.Fatalf("err %v, %d samples back, equal %t", err, len(got), slices.Equal(got, samples))
		}
		if _, _, err := ReadWAV(bytes.NewReader(data), len(samples)-1); !errors.Is(err, ErrTooLong) {
			t.Fatalf("one sample over the limit: %v", err)
		}
	})
}

func TestWriteWAV(t *testing.T) {
	// Samples that every coding reproduces exactly.
	exact := []int16{8, -8, 32256, -32256, 1008, -1008}
	mu := AppendMuLaw(nil, AppendMuLawEncode(nil, []int16{0, 120, -120, 32124, -32124, 3900}))
	tests := []struct {
		name    string
		f       Format
		samples []int16
		wantErr error
	}{
		{"pcm16 mono 8k", Format{Encoding: L16, SampleRate: 8000, Channels: 1}, []int16{1, -1, 32767, -32768, 0}, nil},
		{"pcm16 stereo 16k", Format{Encoding: L16, SampleRate: 16000, Channels: 2}, []int16{1, -1, 32767, -32768}, nil},
		{"mulaw mono odd data", Format{Encoding: MuLaw, SampleRate: 8000, Channels: 1}, mu[:5], nil},
		{"mulaw stereo", Format{Encoding: MuLaw, SampleRate: 8000, Channels: 2}, mu, nil},
		{"alaw mono 16k", Format{Encoding: ALaw, SampleRate: 16000, Channels: 1}, exact, nil},
		{"Frames ignored", Format{Encoding: L16, SampleRate: 8000, Channels: 1, Frames: 99}, []int16{5}, nil},
		{"empty", Format{Encoding: ALaw, SampleRate: 8000, Channels: 2}, nil, nil},
		{"long enough to need several blocks", Format{Encoding: L16, SampleRate: 8000, Channels: 2}, make([]int16, 5000), nil},
		{"partial frame", Format{Encoding: L16, SampleRate: 8000, Channels: 2}, []int16{1, 2, 3}, ErrPartialFrame},
		{"no encoding", Format{SampleRate: 8000, Channels: 1}, nil, ErrUnknownEncoding},
		{"44.1 kHz", Format{Encoding: L16, SampleRate: 44100, Channels: 1}, nil, ErrUnsupportedSampleRate},
		{"three channels", Format{Encoding: L16, SampleRate: 8000, Channels: 3}, nil, ErrUnsupportedChannels},
		{"no channels", Format{Encoding: L16, SampleRate: 8000}, nil, ErrUnsupportedChannels},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			err := WriteWAV(&buf, tt.f, tt.samples)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("error %v, want %v", err, tt.wantErr)
			}
			if err != nil {
				if buf.Len() != 0 {
					t.Errorf("wrote %d bytes before failing", buf.Len())
				}
				return
			}
			if buf.Len()%2 != 0 {
				t.Errorf("file of odd length %d: data chunk not padded", buf.Len())
			}
			f, got, err := ReadWAV(bytes.NewReader(buf.Bytes()), 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			want := tt.f
			want.Frames = int64(len(tt.samples) / tt.f.Channels)
			if f != want {
				t.Errorf("format read back %+v, want %+v", f, want)
			}
			if !slices.Equal(got, tt.samples) && len(got)+len(tt.samples) > 0 {
				t.Errorf("samples read back %v, want %v", got, tt.samples)
			}
		})
	}
}

func TestWriteWAVHeader(t *testing.T) {
	tests := []struct {
		name    string
		f       Format
		samples []int16
		want    []byte
	}{
		{"canonical PCM", Format{Encoding: L16, SampleRate: 8000, Channels: 1}, []int16{1, -2},
			riff("WAVE", fmtChunk(wavTagPCM, 1, 8000, 16), chunk("data", le16(1, -2)))},
		{"mu-law with cbSize and fact, padded", Format{Encoding: MuLaw, SampleRate: 8000, Channels: 1}, []int16{0, 0, 0},
			riff("WAVE", chunk("fmt ", append(fmtBody(wavTagMuLaw, 1, 8000, 1, 8), 0, 0)), chunk("fact", []byte{3, 0, 0, 0}), chunk("data", []byte{0xFF, 0xFF, 0xFF}))},
		{"A-law stereo 16 kHz", Format{Encoding: ALaw, SampleRate: 16000, Channels: 2}, []int16{8, -8},
			riff("WAVE", chunk("fmt ", append(fmtBody(wavTagALaw, 2, 16000, 2, 8), 0, 0)), chunk("fact", []byte{1, 0, 0, 0}), chunk("data", []byte{0xD5, 0x55}))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := WriteWAV(&buf, tt.f, tt.samples); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(buf.Bytes(), tt.want) {
				t.Errorf("wrote\n%x\nwant\n%x", buf.Bytes(), tt.want)
			}
		})
	}
}

func TestWriteWAVWriterError(t *testing.T) {
	boom := errors.New("boom")
	for _, n := range []int{0, 44, 44 + wavBufSize, 44 + 2*5000} { // header, first and last data block
		t.Run(fmt.Sprint("fails after ", n, " bytes"), func(t *testing.T) {
			w := &failingWriter{n: n, err: boom}
			f := Format{Encoding: L16, SampleRate: 8000, Channels: 1}
			if err := WriteWAV(w, f, make([]int16, 5001)); !errors.Is(err, boom) {
				t.Errorf("error %v, want %v", err, boom)
			}
		})
	}
	t.Run("pad byte", func(t *testing.T) {
		w := &failingWriter{n: 58 + 3, err: boom}
		f := Format{Encoding: MuLaw, SampleRate: 8000, Channels: 1}
		if err := WriteWAV(w, f, make([]int16, 3)); !errors.Is(err, boom) {
			t.Errorf("error %v, want %v", err, boom)
		}
	})
}

// failingWriter accepts n bytes, then fails.
type failingWriter struct {
	n   int
	err error
}

func (w *failingWriter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		k := w.n
		w.n = 0
		return k, w.err
	}
	w.n -= len(p)
	return len(p), nil
}
