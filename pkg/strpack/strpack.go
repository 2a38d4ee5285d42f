// Package strpack builds many large strings in few allocations, by carving
// consecutive ones out of a shared buffer. Go rounds every allocation above
// 32 KiB up to whole 8 KiB pages, so a 62,490-byte string on its own takes
// 65,536 bytes; sixteen of them in one buffer waste at most one page between
// them. Strings are immutable, so sharing a backing array is safe; the cost is
// that a buffer stays alive while any of its strings is referenced.
package strpack

import (
	"strings"
	"sync"
)

// Limits of one buffer (chunk).
const (
	// MaxChunkValues is the most strings carved out of one chunk.
	MaxChunkValues = 16
	// MaxChunkBytes is the most bytes a chunk is allocated with.
	MaxChunkBytes = 1 << 20
)

// Packer hands out the strings of a known number of values of bounded length,
// packing consecutive ones into shared chunks. It is safe for concurrent use.
//
// A chunk is sized for k values of maxLen bytes, with k the least of
// MaxChunkValues, MaxChunkBytes/maxLen, the values still expected and the
// values already handed out; when k < 2 the value gets its own allocation of
// exactly its length instead. The Packer drops a chunk once it has handed out
// k values since making it, so it holds at most one chunk, with room for no
// more values than it had handed out before, and none once the expected
// number of values have been handed out. Values beyond those get their own
// allocations.
type Packer struct {
	expected, maxLen int

	mu     sync.Mutex
	issued int
	// chunk is the current chunk, room the values it still has room for;
	// room is 0 when there is no chunk.
	chunk strings.Builder
	room  int
}

// New returns a Packer for expected values of at most maxLen bytes each.
// maxLen only sizes chunks: a longer value is built in its own allocation
// when it does not fit the current chunk. maxLen <= 0 disables packing.
func New(expected, maxLen int) *Packer {
	return &Packer{expected: expected, maxLen: maxLen}
}

// Concat returns the concatenation of parts, built in the current chunk when
// there is room for it, else in a new chunk or its own allocation.
func (p *Packer) Concat(parts ...string) string {
	n := 0
	for _, s := range parts {
		n += len(s)
	}
	p.mu.Lock()
	if p.room == 0 {
		if k := p.chunkValues(); k > 1 {
			p.chunk.Grow(k * p.maxLen)
			p.room = k
		}
	}
	p.issued++
	var v string
	fits := p.room > 0 && n <= p.chunk.Cap()-p.chunk.Len()
	if fits {
		start := p.chunk.Len()
		for _, s := range parts {
			p.chunk.WriteString(s)
		}
		// The chunk never regrows, so earlier values keep pointing into it.
		v = p.chunk.String()[start:]
	}
	// A value too long for the chunk uses up its slot too, so that the chunk
	// is dropped after as many values as it was sized for.
	if p.room > 0 {
		if p.room--; p.room == 0 {
			p.chunk.Reset()
		}
	}
	p.mu.Unlock()
	if fits {
		return v
	}

	var b strings.Builder
	b.Grow(n)
	for _, s := range parts {
		b.WriteString(s)
	}
	return b.String()
}

// chunkValues returns how many values a new chunk is sized for; see Packer.
// p.mu must be held.
func (p *Packer) chunkValues() int {
	if p.maxLen <= 0 {
		return 0
	}
	return min(MaxChunkValues, MaxChunkBytes/p.maxLen, p.expected-p.issued, max(p.issued, 1))
}

// Retained returns the capacity in bytes of the chunk the Packer holds, 0 when
// it holds none.
func (p *Packer) Retained() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.chunk.Cap()
}
