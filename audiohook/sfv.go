package audiohook

import (
	"encoding/base64"
	"strconv"
	"strings"
)

// This file parses and serialises the subset of RFC 8941 structured field
// values that HTTP message signatures use: dictionaries whose members are
// items or inner lists, with parameters. Decimals are kept as their text.

// sfKind is the type of a bare item.
type sfKind uint8

const (
	sfInteger sfKind = iota + 1
	sfDecimal
	sfString
	sfToken
	sfBinary
	sfBoolean
)

// sfItem is a bare item.
type sfItem struct {
	kind sfKind
	num  int64  // integer, or boolean 0/1
	str  string // string, token, decimal text
	bin  []byte // byte sequence
}

// sfParam is one parameter, in order.
type sfParam struct {
	key   string
	value sfItem
}

// sfMember is a dictionary member: an item or an inner list, with
// parameters.
type sfMember struct {
	isList bool
	item   sfItem
	list   []sfItem // items of an inner list (their own parameters are dropped: signatures never use them)
	params []sfParam
}

// param returns a parameter's value.
func (m *sfMember) param(key string) (sfItem, bool) {
	for _, p := range m.params {
		if p.key == key {
			return p.value, true
		}
	}
	return sfItem{}, false
}

// maxFieldLength bounds a structured header we are willing to parse.
const maxFieldLength = 8 << 10

// parseDictionary parses an RFC 8941 dictionary. Later duplicate keys
// overwrite earlier ones, as section 4.2.2 says.
func parseDictionary(s string) (map[string]sfMember, error) {
	if len(s) > maxFieldLength {
		return nil, errSignatureFormat
	}
	p := sfParser{s: s}
	p.skipSP()
	dict := map[string]sfMember{}
	for !p.done() {
		key, ok := p.key()
		if !ok {
			return nil, errSignatureFormat
		}
		var m sfMember
		if p.peek() == '=' {
			p.i++
			if p.peek() == '(' {
				list, ok := p.innerList()
				if !ok {
					return nil, errSignatureFormat
				}
				m.isList, m.list = true, list
			} else {
				it, ok := p.bareItem()
				if !ok {
					return nil, errSignatureFormat
				}
				m.item = it
			}
		} else {
			m.item = sfItem{kind: sfBoolean, num: 1}
		}
		params, ok := p.params()
		if !ok {
			return nil, errSignatureFormat
		}
		m.params = params
		dict[key] = m
		p.skipOWS()
		if p.done() {
			break
		}
		if p.peek() != ',' {
			return nil, errSignatureFormat
		}
		p.i++
		p.skipOWS()
		if p.done() {
			return nil, errSignatureFormat // trailing comma
		}
	}
	return dict, nil
}

type sfParser struct {
	s string
	i int
}

func (p *sfParser) done() bool { return p.i >= len(p.s) }

func (p *sfParser) peek() byte {
	if p.done() {
		return 0
	}
	return p.s[p.i]
}

func (p *sfParser) skipSP() {
	for !p.done() && p.s[p.i] == ' ' {
		p.i++
	}
}

func (p *sfParser) skipOWS() {
	for !p.done() && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

func isLCAlpha(c byte) bool { return c >= 'a' && c <= 'z' }
func isDigit(c byte) bool   { return c >= '0' && c <= '9' }
func isAlpha(c byte) bool   { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func (p *sfParser) key() (string, bool) {
	start := p.i
	if c := p.peek(); !isLCAlpha(c) && c != '*' {
		return "", false
	}
	for !p.done() {
		c := p.s[p.i]
		if !isLCAlpha(c) && !isDigit(c) && c != '_' && c != '-' && c != '.' && c != '*' {
			break
		}
		p.i++
	}
	return p.s[start:p.i], true
}

func (p *sfParser) params() ([]sfParam, bool) {
	var out []sfParam
	for p.peek() == ';' {
		p.i++
		p.skipSP()
		k, ok := p.key()
		if !ok {
			return nil, false
		}
		v := sfItem{kind: sfBoolean, num: 1}
		if p.peek() == '=' {
			p.i++
			if v, ok = p.bareItem(); !ok {
				return nil, false
			}
		}
		replaced := false
		for j := range out {
			if out[j].key == k {
				out[j].value, replaced = v, true
			}
		}
		if !replaced {
			out = append(out, sfParam{key: k, value: v})
		}
	}
	return out, true
}

func (p *sfParser) innerList() ([]sfItem, bool) {
	p.i++ // '('
	var items []sfItem
	for !p.done() {
		p.skipSP()
		if p.peek() == ')' {
			p.i++
			return items, true
		}
		it, ok := p.bareItem()
		if !ok {
			return nil, false
		}
		if _, ok := p.params(); !ok {
			return nil, false
		}
		items = append(items, it)
		if c := p.peek(); c != ' ' && c != ')' {
			return nil, false
		}
	}
	return nil, false
}

func (p *sfParser) bareItem() (sfItem, bool) {
	switch c := p.peek(); {
	case c == '-' || isDigit(c):
		return p.number()
	case c == '"':
		return p.str()
	case c == ':':
		return p.binary()
	case c == '?':
		if p.i+1 < len(p.s) && (p.s[p.i+1] == '0' || p.s[p.i+1] == '1') {
			v := int64(p.s[p.i+1] - '0')
			p.i += 2
			return sfItem{kind: sfBoolean, num: v}, true
		}
		return sfItem{}, false
	case isAlpha(c) || c == '*':
		return p.token()
	}
	return sfItem{}, false
}

func (p *sfParser) number() (sfItem, bool) {
	start := p.i
	if p.peek() == '-' {
		p.i++
	}
	digits, dot := 0, -1
	for !p.done() {
		c := p.s[p.i]
		if isDigit(c) {
			digits++
		} else if c == '.' && dot < 0 {
			dot = digits
		} else {
			break
		}
		p.i++
	}
	text := p.s[start:p.i]
	if digits == 0 {
		return sfItem{}, false
	}
	if dot < 0 {
		if digits > 15 {
			return sfItem{}, false
		}
		n, err := strconv.ParseInt(text, 10, 64)
		return sfItem{kind: sfInteger, num: n}, err == nil
	}
	if dot > 12 || digits-dot > 3 || digits == dot || strings.HasSuffix(text, ".") {
		return sfItem{}, false
	}
	return sfItem{kind: sfDecimal, str: text}, true
}

func (p *sfParser) str() (sfItem, bool) {
	p.i++ // '"'
	var b strings.Builder
	for !p.done() {
		c := p.s[p.i]
		p.i++
		switch {
		case c == '\\':
			if p.done() {
				return sfItem{}, false
			}
			next := p.s[p.i]
			if next != '"' && next != '\\' {
				return sfItem{}, false
			}
			b.WriteByte(next)
			p.i++
		case c == '"':
			return sfItem{kind: sfString, str: b.String()}, true
		case c < 0x20 || c > 0x7e:
			return sfItem{}, false
		default:
			b.WriteByte(c)
		}
	}
	return sfItem{}, false
}

func (p *sfParser) token() (sfItem, bool) {
	start := p.i
	p.i++
	for !p.done() {
		c := p.s[p.i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),;<=>?@[\]{}`, c) >= 0 {
			break
		}
		p.i++
	}
	return sfItem{kind: sfToken, str: p.s[start:p.i]}, true
}

func (p *sfParser) binary() (sfItem, bool) {
	p.i++ // ':'
	end := strings.IndexByte(p.s[p.i:], ':')
	if end < 0 {
		return sfItem{}, false
	}
	b, err := base64.StdEncoding.DecodeString(p.s[p.i : p.i+end])
	if err != nil {
		return sfItem{}, false
	}
	p.i += end + 1
	return sfItem{kind: sfBinary, bin: b}, true
}

// serializeItem writes an item in RFC 8941 canonical form.
func serializeItem(b *strings.Builder, it sfItem) {
	switch it.kind {
	case sfInteger:
		b.WriteString(strconv.FormatInt(it.num, 10))
	case sfDecimal, sfToken:
		b.WriteString(it.str)
	case sfString:
		b.WriteByte('"')
		for i := 0; i < len(it.str); i++ {
			if c := it.str[i]; c == '"' || c == '\\' {
				b.WriteByte('\\')
			}
			b.WriteByte(it.str[i])
		}
		b.WriteByte('"')
	case sfBinary:
		b.WriteByte(':')
		b.WriteString(base64.StdEncoding.EncodeToString(it.bin))
		b.WriteByte(':')
	case sfBoolean:
		if it.num == 1 {
			b.WriteString("?1")
		} else {
			b.WriteString("?0")
		}
	}
}

// serializeInnerList writes an inner list with its parameters, the form
// of the signature-params component (RFC 9421 section 2.3).
func serializeInnerList(m sfMember) string {
	var b strings.Builder
	b.WriteByte('(')
	for i, it := range m.list {
		if i > 0 {
			b.WriteByte(' ')
		}
		serializeItem(&b, it)
	}
	b.WriteByte(')')
	for _, p := range m.params {
		b.WriteByte(';')
		b.WriteString(p.key)
		if p.value.kind == sfBoolean && p.value.num == 1 {
			continue
		}
		b.WriteByte('=')
		serializeItem(&b, p.value)
	}
	return b.String()
}
