package codec

import (
	"errors"
	"fmt"
	"slices"
	"testing"
)

// channelCases are the de-interleaving cases, in samples; the G.711 and L16
// variants run them on coded bytes.
var channelCases = []struct {
	name              string
	src               []int16
	channels, channel int
	want              []int16
	wantErr           error
}{
	{"mono copies", []int16{1, 2, 3}, 1, 0, []int16{1, 2, 3}, nil},
	{"stereo left", []int16{1, -1, 2, -2, 3, -3}, 2, 0, []int16{1, 2, 3}, nil},
	{"stereo right", []int16{1, -1, 2, -2, 3, -3}, 2, 1, []int16{-1, -2, -3}, nil},
	{"three channels middle", []int16{1, 10, 100, 2, 20, 200}, 3, 1, []int16{10, 20}, nil},
	{"empty", nil, 2, 1, nil, nil},
	{"partial frame", []int16{1, -1, 2}, 2, 0, nil, ErrPartialFrame},
	{"zero channels", []int16{1}, 0, 0, nil, ErrChannelCount},
	{"negative channels", []int16{1}, -2, 0, nil, ErrChannelCount},
	{"channel too high", []int16{1, 2}, 2, 2, nil, ErrChannelIndex},
	{"negative channel", []int16{1, 2}, 2, -1, nil, ErrChannelIndex},
}

func TestAppendChannel(t *testing.T) {
	for _, tt := range channelCases {
		t.Run(tt.name, func(t *testing.T) {
			prefix := []int16{42}
			got, err := AppendChannel(slices.Clone(prefix), tt.src, tt.channels, tt.channel)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("error %v, want %v", err, tt.wantErr)
			}
			if want := append(slices.Clone(prefix), tt.want...); !slices.Equal(got, want) {
				t.Errorf("got %v, want %v", got, want)
			}
		})
	}
}

// TestAppendCodedChannel runs the channel cases through the coded variants:
// each must equal decoding everything, then AppendChannel.
func TestAppendCodedChannel(t *testing.T) {
	codecs := []struct {
		enc     Encoding
		channel func([]int16, []byte, int, int) ([]int16, error)
	}{
		{MuLaw, AppendMuLawChannel},
		{ALaw, AppendALawChannel},
		{L16, AppendL16Channel},
	}
	for _, c := range codecs {
		for _, tt := range channelCases {
			t.Run(fmt.Sprintf("%v/%s", c.enc, tt.name), func(t *testing.T) {
				// Samples that survive a G.711 round trip unchanged.
				src := AppendMuLaw(nil, AppendMuLawEncode(nil, tt.src))
				if c.enc == ALaw {
					src = AppendALaw(nil, AppendALawEncode(nil, tt.src))
				}
				coded, _ := AppendEncode(c.enc, nil, src)
				want, wantErr := AppendChannel([]int16{42}, src, tt.channels, tt.channel)
				if !errors.Is(wantErr, tt.wantErr) {
					t.Fatalf("AppendChannel error %v, want %v", wantErr, tt.wantErr)
				}
				got, err := c.channel([]int16{42}, coded, tt.channels, tt.channel)
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("error %v, want %v", err, tt.wantErr)
				}
				if !slices.Equal(got, want) {
					t.Errorf("got %v, want %v", got, want)
				}
				viaEncoding, err := AppendDecodeChannel(c.enc, []int16{42}, coded, tt.channels, tt.channel)
				if !errors.Is(err, tt.wantErr) || !slices.Equal(viaEncoding, want) {
					t.Errorf("AppendDecodeChannel = %v, %v; want %v, %v", viaEncoding, err, want, tt.wantErr)
				}
			})
		}
	}
	t.Run("L16 odd length", func(t *testing.T) {
		got, err := AppendL16Channel([]int16{42}, []byte{1, 2, 3}, 1, 0)
		if !errors.Is(err, ErrOddLength) || !slices.Equal(got, []int16{42}) {
			t.Errorf("got %v, %v; want [42], ErrOddLength", got, err)
		}
	})
	t.Run("stereo mulaw frame of AudioHook", func(t *testing.T) {
		// 100 ms of PCMU stereo is 1600 bytes: external sample, internal
		// sample, and so on, as AudioHook sends a stereo call.
		frame := make([]byte, 1600)
		for i := range frame {
			frame[i] = 0x80 // +32124
			if i%2 == 1 {
				frame[i] = 0x00 // -32124
			}
		}
		external, err := AppendMuLawChannel(nil, frame, 2, 0)
		if err != nil || len(external) != 800 || slices.ContainsFunc(external, func(v int16) bool { return v != 32124 }) {
			t.Errorf("external leg wrong: %d samples, err %v", len(external), err)
		}
		internal, err := AppendMuLawChannel(nil, frame, 2, 1)
		if err != nil || len(internal) != 800 || slices.ContainsFunc(internal, func(v int16) bool { return v != -32124 }) {
			t.Errorf("internal leg wrong: %d samples, err %v", len(internal), err)
		}
	})
}
