package codec

import (
	"errors"
	"slices"
	"testing"
)

func TestParseEncoding(t *testing.T) {
	tests := []struct {
		name    string
		want    Encoding
		wantErr error
	}{
		{"mulaw", MuLaw, nil},
		{"PCMU", MuLaw, nil},
		{"alaw", ALaw, nil},
		{"PCMA", ALaw, nil},
		{"pcm16", L16, nil},
		{"L16", L16, nil},
		{"", 0, ErrUnknownEncoding},
		{"MULAW", 0, ErrUnknownEncoding},
		{"pcmu", 0, ErrUnknownEncoding},
		{"ulaw", 0, ErrUnknownEncoding},
		{"s16le", 0, ErrUnknownEncoding},
		{"opus", 0, ErrUnknownEncoding},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseEncoding(tt.name)
			if got != tt.want || !errors.Is(err, tt.wantErr) {
				t.Errorf("ParseEncoding(%q) = %v, %v; want %v, %v", tt.name, got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestEncodingMethods(t *testing.T) {
	tests := []struct {
		enc   Encoding
		name  string
		bytes int
	}{
		{MuLaw, "mulaw", 1},
		{ALaw, "alaw", 1},
		{L16, "pcm16", 2},
		{0, "Encoding(0)", 0},
		{9, "Encoding(9)", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.enc.String(); got != tt.name {
				t.Errorf("String() = %q, want %q", got, tt.name)
			}
			if got := tt.enc.BytesPerSample(); got != tt.bytes {
				t.Errorf("BytesPerSample() = %d, want %d", got, tt.bytes)
			}
			parsed, err := ParseEncoding(tt.name)
			if valid := tt.bytes > 0; valid && (err != nil || parsed != tt.enc) {
				t.Errorf("ParseEncoding(String()) = %v, %v", parsed, err)
			} else if !valid && err == nil {
				t.Errorf("ParseEncoding(%q) accepted an invalid encoding's name", tt.name)
			}
		})
	}
}

func TestAppendDecodeEncode(t *testing.T) {
	samples := []int16{0, 8, -8, 32124, -32124} // exact in all three codings
	tests := []struct {
		name       string
		enc        Encoding
		coded      []byte
		wantDecErr error
		wantEncErr error
	}{
		{"mulaw", MuLaw, AppendMuLawEncode(nil, samples), nil, nil},
		{"alaw", ALaw, AppendALawEncode(nil, []int16{8, 8, -8, 32256, -32256}), nil, nil},
		{"pcm16", L16, AppendL16Encode(nil, samples), nil, nil},
		{"pcm16 odd", L16, []byte{1, 2, 3}, ErrOddLength, nil},
		{"invalid", 0, []byte{1, 2}, ErrUnknownEncoding, ErrUnknownEncoding},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := AppendDecode(tt.enc, []int16{42}, tt.coded)
			if !errors.Is(err, tt.wantDecErr) {
				t.Fatalf("AppendDecode error %v, want %v", err, tt.wantDecErr)
			}
			if err != nil {
				if !slices.Equal(got, []int16{42}) {
					t.Errorf("dst changed on error: %v", got)
				}
			} else {
				again, err := AppendEncode(tt.enc, []byte{0xAB}, got[1:])
				if !errors.Is(err, tt.wantEncErr) || !slices.Equal(again, append([]byte{0xAB}, tt.coded...)) {
					t.Errorf("AppendEncode(AppendDecode(x)) = %x, %v; want %x", again, err, tt.coded)
				}
			}
			if tt.enc.BytesPerSample() == 0 {
				if got, err := AppendDecodeChannel(tt.enc, []int16{42}, tt.coded, 1, 0); !errors.Is(err, ErrUnknownEncoding) || !slices.Equal(got, []int16{42}) {
					t.Errorf("AppendDecodeChannel = %v, %v; want unchanged dst and ErrUnknownEncoding", got, err)
				}
			}
			if tt.wantEncErr != nil {
				if got, err := AppendEncode(tt.enc, []byte{0xAB}, samples); !errors.Is(err, tt.wantEncErr) || !slices.Equal(got, []byte{0xAB}) {
					t.Errorf("AppendEncode = %x, %v; want unchanged dst and %v", got, err, tt.wantEncErr)
				}
			}
		})
	}
}
