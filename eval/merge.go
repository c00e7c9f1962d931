package eval

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// Merge combines corpora into one, so that one run measures them together
// (synthetic and real voices, say) with their speakers kept apart: each
// corpus's speakers, base voices and utterance ids are prefixed with
// "NAME/", NAME being the corpus directory's base name (with "-2", "-3", …
// appended when two corpora share one). Speakers of different corpora are
// therefore never the same voice: they are each other's impostors and are
// mixed together. Merge of one corpus returns it unchanged. The inputs
// are not modified.
func Merge(cs ...*Corpus) *Corpus {
	if len(cs) == 1 {
		return cs[0]
	}
	out := &Corpus{}
	var dirs []string
	seen := map[string]int{}
	for _, c := range cs {
		dirs = append(dirs, c.Dir)
		name := filepath.Base(filepath.Clean(c.Dir))
		seen[name]++
		if n := seen[name]; n > 1 {
			name = fmt.Sprintf("%s-%d", name, n)
		}
		for _, u := range c.Utterances {
			u.Speaker = name + "/" + u.Speaker
			u.BaseVoice = name + "/" + u.BaseVoice
			u.ID = name + "/" + u.ID
			out.Utterances = append(out.Utterances, u)
		}
		out.Calls = append(out.Calls, c.Calls...)
	}
	out.Dir = strings.Join(dirs, ",")
	slices.SortStableFunc(out.Utterances, func(a, b Utterance) int {
		if n := strings.Compare(a.Speaker, b.Speaker); n != 0 {
			return n
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out
}
