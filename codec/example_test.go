package codec_test

import (
	"bytes"
	"fmt"
	"io"

	"github.com/earshot-voice/earshot/codec"
)

func ExampleAppendMuLaw() {
	// Two 4-sample µ-law frames, decoded into one reused buffer.
	var pcm []int16
	for _, frame := range [][]byte{{0xFF, 0x80, 0x00, 0xF0}, {0x7F, 0xFE, 0x7E, 0x8F}} {
		pcm = codec.AppendMuLaw(pcm[:0], frame)
		fmt.Println(pcm)
	}
	// Output:
	// [0 32124 -32124 120]
	// [0 8 -8 16764]
}

func ExampleAppendChannel() {
	// Interleaved stereo: external, internal, external, internal, ...
	stereo := []int16{100, -1, 200, -2, 300, -3}
	external, err := codec.AppendChannel(nil, stereo, 2, 0)
	if err != nil {
		panic(err)
	}
	internal, _ := codec.AppendChannel(nil, stereo, 2, 1)
	fmt.Println(external, internal)

	_, err = codec.AppendChannel(nil, stereo[:5], 2, 0)
	fmt.Println(err)
	// Output:
	// [100 200 300] [-1 -2 -3]
	// codec: length is not a whole number of frames
}

func ExampleAppendMuLawChannel() {
	// An AudioHook PCMU stereo frame; keep the external leg only.
	frame := []byte{0x80, 0x00, 0xF0, 0x70, 0xFF, 0x7F}
	external, err := codec.AppendMuLawChannel(nil, frame, 2, 0)
	fmt.Println(external, err)
	// Output: [32124 120 0] <nil>
}

func ExampleNewWAVReader() {
	// A stereo A-law WAV file, as a client might upload it.
	var file bytes.Buffer
	f := codec.Format{Encoding: codec.ALaw, SampleRate: 8000, Channels: 2}
	if err := codec.WriteWAV(&file, f, []int16{8, -8, 1008, -1008, 32256, -32256}); err != nil {
		panic(err)
	}

	r, err := codec.NewWAVReader(&file)
	if err != nil {
		panic(err)
	}
	format := r.Format()
	fmt.Printf("%v %d Hz, %d channels, %d frames\n", format.Encoding, format.SampleRate, format.Channels, format.Frames)

	buf := make([]int16, 4) // whole frames per Read
	for {
		n, err := r.Read(buf)
		if err == io.EOF {
			break
		}
		if err != nil {
			panic(err)
		}
		left, _ := codec.AppendChannel(nil, buf[:n], format.Channels, 0)
		fmt.Println(left)
	}
	// Output:
	// alaw 8000 Hz, 2 channels, 3 frames
	// [8 1008]
	// [32256]
}

func ExampleDecimator() {
	// 100 ms of a 16 kHz DC signal becomes 50 ms at 8 kHz; once the
	// filter's history has filled, DC passes unchanged.
	in := make([]int16, 1600)
	for i := range in {
		in[i] = 1000
	}
	var d codec.Decimator
	out := d.Append(nil, in[:999]) // chunking does not matter
	out = d.Append(out, in[999:])
	fmt.Println(len(out), out[0], out[len(out)-1])
	// Output: 800 0 1000
}

func ExampleParseEncoding() {
	for _, name := range []string{"mulaw", "PCMU", "L16", "opus"} {
		enc, err := codec.ParseEncoding(name)
		fmt.Println(enc, enc.BytesPerSample(), err)
	}
	// Output:
	// mulaw 1 <nil>
	// mulaw 1 <nil>
	// pcm16 2 <nil>
	// Encoding(0) 0 codec: unknown encoding: "opus"
}
