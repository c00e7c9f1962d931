package codec

import "encoding/binary"

// Builders of WAV streams for tests, written from the RIFF/WAVE layout:
// "RIFF", size, "WAVE", then chunks of id, little-endian size, body and a
// pad byte after an odd-sized body.

// riff returns a RIFF stream of the given form type holding the chunks,
// with the RIFF size filled in.
func riff(form string, chunks ...[]byte) []byte {
	b := []byte("RIFF\x00\x00\x00\x00" + form)
	for _, c := range chunks {
		b = append(b, c...)
	}
	binary.LittleEndian.PutUint32(b[4:], uint32(len(b)-8))
	return b
}

// chunk returns a chunk with its size taken from body and a pad byte when
// the body has an odd length.
func chunk(id string, body []byte) []byte {
	c := sizedChunk(id, uint32(len(body)), body)
	if len(body)%2 == 1 {
		c = append(c, 0)
	}
	return c
}

// sizedChunk returns a chunk that declares size whatever body holds, without
// padding, for broken and streaming files.
func sizedChunk(id string, size uint32, body []byte) []byte {
	c := append([]byte(id), 0, 0, 0, 0)
	binary.LittleEndian.PutUint32(c[4:], size)
	return append(c, body...)
}

// fmtBody returns the 16 bytes of a plain fmt chunk. byteRate is derived.
func fmtBody(tag, channels uint16, rate uint32, blockAlign, bits uint16) []byte {
	b := binary.LittleEndian.AppendUint16(nil, tag)
	b = binary.LittleEndian.AppendUint16(b, channels)
	b = binary.LittleEndian.AppendUint32(b, rate)
	b = binary.LittleEndian.AppendUint32(b, rate*uint32(blockAlign))
	b = binary.LittleEndian.AppendUint16(b, blockAlign)
	return binary.LittleEndian.AppendUint16(b, bits)
}

// fmtChunk returns a consistent plain fmt chunk for a format tag.
func fmtChunk(tag, channels uint16, rate uint32, bits uint16) []byte {
	return chunk("fmt ", fmtBody(tag, channels, rate, channels*bits/8, bits))
}

// extBody returns the 40 bytes of a WAVE_FORMAT_EXTENSIBLE fmt chunk whose
// subformat GUID is {0000<subTag>-0000-0010-8000-00AA00389B71}.
func extBody(subTag, channels uint16, rate uint32, bits, validBits uint16) []byte {
	b := fmtBody(wavTagExtensible, channels, rate, channels*bits/8, bits)
	b = binary.LittleEndian.AppendUint16(b, 22) // cbSize
	b = binary.LittleEndian.AppendUint16(b, validBits)
	mask := uint32(0x4) // front centre
	if channels == 2 {
		mask = 0x3 // front left, front right
	}
	b = binary.LittleEndian.AppendUint32(b, mask)
	b = binary.LittleEndian.AppendUint32(b, uint32(subTag))
	return append(b, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71)
}

// le16 returns samples as little-endian bytes.
func le16(samples ...int16) []byte { return AppendL16Encode(nil, samples) }
