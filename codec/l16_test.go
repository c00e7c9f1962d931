package codec

import (
	"errors"
	"slices"
	"testing"
)

func TestAppendL16(t *testing.T) {
	tests := []struct {
		name    string
		dst     []int16
		src     []byte
		want    []int16
		wantErr error
	}{
		{"nil", nil, nil, nil, nil},
		{"little-endian extremes", nil,
			[]byte{0x01, 0x00, 0xFF, 0xFF, 0x00, 0x80, 0xFF, 0x7F, 0x34, 0x12},
			[]int16{1, -1, -32768, 32767, 0x1234}, nil},
		{"appends after prefix", []int16{9}, []byte{0x02, 0x00}, []int16{9, 2}, nil},
		{"odd length", []int16{9}, []byte{0x02, 0x00, 0x03}, []int16{9}, ErrOddLength},
		{"single byte", nil, []byte{0x02}, nil, ErrOddLength},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := AppendL16(slices.Clone(tt.dst), tt.src)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("error %v, want %v", err, tt.wantErr)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("AppendL16(%v, %x) = %v, want %v", tt.dst, tt.src, got, tt.want)
			}
		})
	}
}

func TestAppendL16Encode(t *testing.T) {
	tests := []struct {
		name string
		dst  []byte
		src  []int16
		want []byte
	}{
		{"nil", nil, nil, nil},
		{"extremes", nil, []int16{1, -1, -32768, 32767, 0x1234},
			[]byte{0x01, 0x00, 0xFF, 0xFF, 0x00, 0x80, 0xFF, 0x7F, 0x34, 0x12}},
		{"appends after prefix", []byte{0xAB}, []int16{2}, []byte{0xAB, 0x02, 0x00}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := AppendL16Encode(slices.Clone(tt.dst), tt.src)
			if !slices.Equal(got, tt.want) {
				t.Errorf("AppendL16Encode(%x, %v) = %x, want %x", tt.dst, tt.src, got, tt.want)
			}
		})
	}
	t.Run("round trip of every value", func(t *testing.T) {
		all := make([]int16, 0, 1<<16)
		for v := -32768; v <= 32767; v++ {
			all = append(all, int16(v))
		}
		back, err := AppendL16(nil, AppendL16Encode(nil, all))
		if err != nil || !slices.Equal(back, all) {
			t.Fatalf("round trip differs (err %v)", err)
		}
	})
}
