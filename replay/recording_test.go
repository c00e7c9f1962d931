package replay

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/earshot-voice/earshot/audiohook"
	"github.com/earshot-voice/earshot/codec"
)

func TestLoadRecording(t *testing.T) {
	dir := t.TempDir()
	ext, in := rampSamples(1000, -8000, 16), rampSamples(1000, 100, 7)
	hi := tone(3200, 16000, 1000, 8000)
	var decimated []int16
	var d codec.Decimator
	decimated = d.Append(decimated, hi)
	rawStereo := muLaw(interleave2(ext, in))
	bad441 := func() []byte {
		var b bytes.Buffer
		codec.WriteWAV(&b, codec.Format{Encoding: codec.L16, SampleRate: 8000, Channels: 1}, ext)
		data := b.Bytes()
		binary.LittleEndian.PutUint32(data[24:], 44100)
		return data
	}()
	tests := []struct {
		name     string
		path     string
		channels int // of raw files
		wantCh   int
		wantLegs [2][]byte
		wantErr  error
	}{
		{name: "wav mono pcm16", path: writeWAV(t, dir, "mono.wav", codec.Format{Encoding: codec.L16, SampleRate: 8000, Channels: 1}, ext),
			wantCh: 1, wantLegs: [2][]byte{muLaw(ext)}},
		{name: "wav stereo mulaw", path: writeWAV(t, dir, "stereo.wav", codec.Format{Encoding: codec.MuLaw, SampleRate: 8000, Channels: 2}, interleave2(ext, in)),
			wantCh: 2, wantLegs: [2][]byte{muLaw(ext), muLaw(in)}},
		{name: "wav 16 kHz mono decimated", path: writeWAV(t, dir, "wide.wav", codec.Format{Encoding: codec.L16, SampleRate: 16000, Channels: 1}, hi),
			wantCh: 1, wantLegs: [2][]byte{muLaw(decimated)}},
		{name: "wav 16 kHz stereo decimated", path: writeWAV(t, dir, "wide2.wav", codec.Format{Encoding: codec.L16, SampleRate: 16000, Channels: 2}, interleave2(hi, hi)),
			wantCh: 2, wantLegs: [2][]byte{muLaw(decimated), muLaw(decimated)}},
		{name: "wav without extension", path: writeWAV(t, dir, "noext", codec.Format{Encoding: codec.ALaw, SampleRate: 8000, Channels: 1}, ext),
			wantCh: 1, wantLegs: [2][]byte{muLaw(codec.AppendALaw(nil, codec.AppendALawEncode(nil, ext)))}},
		{name: "raw mono", path: writeFile(t, dir, "mono.ulaw", muLaw(ext)), channels: 1, wantCh: 1, wantLegs: [2][]byte{muLaw(ext)}},
		{name: "raw stereo", path: writeFile(t, dir, "stereo.raw", rawStereo), channels: 2, wantCh: 2, wantLegs: [2][]byte{muLaw(ext), muLaw(in)}},
		{name: "raw stereo, odd length", path: writeFile(t, dir, "odd.raw", rawStereo[:7]), channels: 2, wantErr: ErrFileFormat},
		{name: "raw with 3 channels", path: writeFile(t, dir, "three.ul", rawStereo[:9]), channels: 3, wantErr: ErrFileFormat},
		{name: "raw empty", path: writeFile(t, dir, "empty.mulaw", nil), channels: 1, wantErr: ErrEmptyFile},
		{name: "wav empty", path: writeWAV(t, dir, "empty.wav", codec.Format{Encoding: codec.L16, SampleRate: 8000, Channels: 1}, nil), wantErr: ErrEmptyFile},
		{name: "wav 44.1 kHz", path: writeFile(t, dir, "cd.wav", bad441), wantErr: codec.ErrUnsupportedSampleRate},
		{name: "not audio", path: writeFile(t, dir, "notes.txt", []byte("hello")), channels: 1, wantErr: ErrFileType},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec, err := LoadRecording(tt.path, tt.channels)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if rec.Channels != tt.wantCh || rec.Samples != len(tt.wantLegs[0]) || rec.Name != tt.path {
				t.Fatalf("got %d channels, %d samples, name %q", rec.Channels, rec.Samples, rec.Name)
			}
			for ch := range 2 {
				if !bytes.Equal(rec.legs[ch], tt.wantLegs[ch]) {
					t.Errorf("leg %d differs (%d bytes, want %d)", ch, len(rec.legs[ch]), len(tt.wantLegs[ch]))
				}
			}
			if want := time.Duration(rec.Samples) * time.Second / 8000; rec.Duration() != want {
				t.Errorf("duration %v, want %v", rec.Duration(), want)
			}
		})
	}
}

// TestPayload checks the wire bytes of every layout, for a stereo and a
// mono file: the legs in the selected order, silence for the internal
// leg a mono file lacks.
func TestPayload(t *testing.T) {
	ext, in := []byte{1, 2, 3, 4}, []byte{11, 12, 13, 14}
	sil := []byte{silence, silence, silence, silence}
	stereo, err := ReadRawRecording("s", bytes.NewReader([]byte{1, 11, 2, 12, 3, 13, 4, 14}), 2)
	if err != nil {
		t.Fatal(err)
	}
	mono, err := ReadRawRecording("m", bytes.NewReader(ext), 1)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		rec    *Recording
		layout Layout
		want   []byte
	}{
		{"stereo file, external", stereo, LayoutExternal, ext},
		{"stereo file, internal", stereo, LayoutInternal, in},
		{"stereo file, external+internal", stereo, LayoutExternalInternal, []byte{1, 11, 2, 12, 3, 13, 4, 14}},
		{"stereo file, internal+external", stereo, LayoutInternalExternal, []byte{11, 1, 12, 2, 13, 3, 14, 4}},
		{"stereo file, none", stereo, LayoutNone, nil},
		{"mono file, external", mono, LayoutExternal, ext},
		{"mono file, internal is silence", mono, LayoutInternal, sil},
		{"mono file, stereo: silence on internal", mono, LayoutExternalInternal, []byte{1, silence, 2, silence, 3, silence, 4, silence}},
		{"mono file, internal+external", mono, LayoutInternalExternal, []byte{silence, 1, silence, 2, silence, 3, silence, 4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.rec.Payload(tt.layout)
			if !bytes.Equal(got, tt.want) {
				t.Fatalf("payload % x, want % x", got, tt.want)
			}
			if again := tt.rec.Payload(tt.layout); len(got) > 0 && &again[0] != &got[0] {
				t.Error("the payload was built twice")
			}
		})
	}
	// Built layouts are counted once, shared legs not at all.
	if got, want := stereo.Bytes(), 8+8+8; got != want {
		t.Errorf("stereo recording holds %d bytes, want %d", got, want)
	}
	if got, want := mono.Bytes(), 4+4+8+8; got != want {
		t.Errorf("mono recording holds %d bytes, want %d", got, want)
	}
}

// TestFraming cuts payloads into frames for each layout's channel count.
func TestFraming(t *testing.T) {
	payload := make([]byte, 1000)
	for i := range payload {
		payload[i] = byte(i)
	}
	tests := []struct {
		name      string
		channels  int
		frame     time.Duration
		limit     int
		wantCount int
		wantLens  []int // first and last frame
	}{
		{"mono 200 ms, one short frame", 1, 200 * time.Millisecond, 0, 1, []int{1000, 1000}},
		{"mono 20 ms", 1, 20 * time.Millisecond, 0, 7, []int{160, 40}},
		{"stereo 20 ms", 2, 20 * time.Millisecond, 0, 4, []int{320, 40}},
		{"stereo 20 ms, capped at 300 samples", 2, 20 * time.Millisecond, 300, 2, []int{320, 280}},
		{"mono 10 ms, cap beyond the end", 1, 10 * time.Millisecond, 5000, 13, []int{80, 40}},
		{"no media", 0, 200 * time.Millisecond, 0, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFraming(payload, tt.channels, tt.frame, tt.limit)
			if f.count() != tt.wantCount {
				t.Fatalf("count %d, want %d", f.count(), tt.wantCount)
			}
			if tt.wantCount == 0 {
				return
			}
			var joined []byte
			for k := range f.count() {
				fr := f.frame(k)
				if len(fr)%max(tt.channels, 1) != 0 {
					t.Fatalf("frame %d has %d bytes: not whole samples", k, len(fr))
				}
				joined = append(joined, fr...)
			}
			if first, last := len(f.frame(0)), len(f.frame(f.count()-1)); first != tt.wantLens[0] || last != tt.wantLens[1] {
				t.Errorf("first/last frame %d/%d bytes, want %v", first, last, tt.wantLens)
			}
			want := payload
			if tt.limit > 0 && tt.limit*tt.channels < len(payload) {
				want = payload[:tt.limit*tt.channels]
			}
			if !bytes.Equal(joined, want) {
				t.Error("frames do not join up to the payload")
			}
		})
	}
}

func TestLayoutOf(t *testing.T) {
	m := func(format string, rate int, ch ...string) audiohook.Media {
		return audiohook.Media{Type: "audio", Format: format, Channels: ch, Rate: rate}
	}
	tests := []struct {
		name     string
		offer    string
		selected []audiohook.Media
		want     Layout
		wantErr  string
	}{
		{"none", "", nil, LayoutNone, ""},
		{"empty", "", []audiohook.Media{}, LayoutNone, ""},
		{"external", "", []audiohook.Media{m("PCMU", 8000, "external")}, LayoutExternal, ""},
		{"internal", "", []audiohook.Media{m("PCMU", 8000, "internal")}, LayoutInternal, ""},
		{"stereo", "", []audiohook.Media{m("PCMU", 8000, "external", "internal")}, LayoutExternalInternal, ""},
		{"stereo reordered", "", []audiohook.Media{m("PCMU", 8000, "internal", "external")}, LayoutNone, "channel order"},
		{"two entries", "", []audiohook.Media{m("PCMU", 8000, "external"), m("PCMU", 8000, "internal")}, LayoutNone, "more than one"},
		{"L16 not offered", "", []audiohook.Media{m("L16", 8000, "external")}, LayoutNone, "not one of the offered"},
		{"16 kHz not offered", "", []audiohook.Media{m("PCMU", 16000, "external")}, LayoutNone, "not one of the offered"},
		{"stereo offered alone", OfferStereo, []audiohook.Media{m("PCMU", 8000, "external", "internal")}, LayoutExternalInternal, ""},
		{"mono when stereo alone was offered", OfferStereo, []audiohook.Media{m("PCMU", 8000, "external")}, LayoutNone, "not one of the offered"},
		{"external offered alone", OfferMono, []audiohook.Media{m("PCMU", 8000, "external")}, LayoutExternal, ""},
		{"internal when external alone was offered", OfferMono, []audiohook.Media{m("PCMU", 8000, "internal")}, LayoutNone, "not one of the offered"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := layoutOf(tt.selected, offer(tt.offer))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

// TestOffer: the Genesys offer is stereo first, then external, then
// internal; the others offer one entry. All PCMU at 8 kHz.
func TestOffer(t *testing.T) {
	tests := []struct {
		kind string
		want [][]string
	}{
		{"", [][]string{{"external", "internal"}, {"external"}, {"internal"}}},
		{OfferGenesys, [][]string{{"external", "internal"}, {"external"}, {"internal"}}},
		{OfferStereo, [][]string{{"external", "internal"}}},
		{OfferMono, [][]string{{"external"}}},
	}
	for _, tt := range tests {
		o := offer(tt.kind)
		if len(o) != len(tt.want) {
			t.Fatalf("%q: %d entries", tt.kind, len(o))
		}
		for i, m := range o {
			if m.Type != "audio" || m.Format != "PCMU" || m.Rate != 8000 || strings.Join(m.Channels, ",") != strings.Join(tt.want[i], ",") {
				t.Errorf("%q entry %d: %+v", tt.kind, i, m)
			}
		}
	}
}
