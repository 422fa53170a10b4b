package stdioconn

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
)

// decoderFrames is how the SDK's IOTransport splits a stream, the
// reference frames must agree with: encoding/json's decoder, and the byte
// after each value must end its line.
func decoderFrames(stream []byte) (msgs []string, err error) {
	dec := json.NewDecoder(bytes.NewReader(stream))
	for {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return msgs, err
		}
		var next [1]byte
		if n, _ := dec.Buffered().Read(next[:]); n > 0 && next[0] != '\n' && next[0] != '\r' {
			return msgs, errors.New("trailing data")
		}
		msgs = append(msgs, string(raw))
	}
}

// readFrames reads every message of stream with frames, the stream handed
// over in chunks of chunk bytes.
func readFrames(stream []byte, chunk, limit int) (msgs []string, err error) {
	f := newFrames(chunks(stream, chunk), limit)
	for {
		m, err := f.next()
		if err != nil {
			return msgs, err
		}
		msgs = append(msgs, string(m))
	}
}

// chunks hands stream over at most n bytes at a time (0: all at once).
func chunks(stream []byte, n int) io.Reader {
	if n == 0 {
		return bytes.NewReader(stream)
	}
	return &chunked{r: bytes.NewReader(stream), n: n}
}

// chunked hands its reader's bytes over at most n at a time.
type chunked struct {
	r io.Reader
	n int
}

func (c *chunked) Read(p []byte) (int, error) { return c.r.Read(p[:min(len(p), c.n)]) }

// sameFrames checks frames against the SDK's decoder reading the whole
// stream at once. A stream it reads to its end comes out the same, message
// for message, in any chunks. Of one it refuses, frames gives the same
// messages before the refusal; it may read on, as the SDK does when its
// decoder had not yet read the byte after a message (the check cannot
// wait for the next chunk), but only past where the decoder stopped.
func sameFrames(t *testing.T, stream []byte, chunk int) {
	t.Helper()
	want, wantErr := decoderFrames(stream)
	got, err := readFrames(stream, chunk, 0)
	same := len(got) >= len(want) && strings.Join(got[:len(want)], "\n") == strings.Join(want, "\n")
	if wantErr == io.EOF {
		same = same && len(got) == len(want) && err == io.EOF
	}
	if !same {
		t.Fatalf("stream %q in chunks of %d:\n got %q, %v\nwant %q, %v", stream, chunk, got, err, want, wantErr)
	}
}

// Every stream splits into the messages, and ends with or without an
// error, as the SDK's decoder splits it: one message a line, blank lines
// and CRLF, then a message over several lines (from which the decoder
// reads), two on a line, a stream cut in a message or without a last line
// break.
func TestFramesSplitAsTheSDKsDecoder(t *testing.T) {
	for _, stream := range []string{
		"{\"a\":1}\n[{\"b\":2},{\"c\":3}]\n",
		"\n\n  {\"a\":1}\r\n\r\n\t[1]\n",
		"{\"a\":1}\n{\"b\":\n 2}\n{\"c\":3}\n",
		"{\"a\":1}\n{\"b\":2} {\"c\":3}\n{\"d\":4}\n",
		"{\"a\":1}\n{\"b\":",
		"{\"a\":1}\n{\"b\":2}",
		"{\"a\":1} \n{\"b\":2}\n",
		"{\"a\":1}\n\"text\"\n12\n",
		"{\"a\":\"x\\ny\"}\n{nope}\n",
		"{\"a\":\"\u2028\"}\r\n",
		"",
		"\n \n",
	} {
		for _, chunk := range []int{0, 1, 3, 7} {
			sameFrames(t, []byte(stream), chunk)
		}
	}
}

// A message over the bound ends the stream, on a line of its own or in a
// line that never ends; one at the bound is read.
func TestFramesBoundAMessage(t *testing.T) {
	at := `{"x":"` + strings.Repeat("y", 24) + `"}` // 32 bytes
	if got, err := readFrames([]byte(at+"\n"+at+"\n"), 5, 32); len(got) != 2 || err != io.EOF {
		t.Errorf("two messages at the bound: %q, %v", got, err)
	}
	over := `{"x":"` + strings.Repeat("y", 25) + `"}`
	if got, err := readFrames([]byte(at+"\n"+over+"\n"), 5, 32); len(got) != 1 || !errors.Is(err, errFrameTooLarge) {
		t.Errorf("a message over the bound: %q, %v", got, err)
	}
	endless := &chunked{r: io.MultiReader(strings.NewReader(`{"x":`), neverEnds{}), n: 5}
	f := newFrames(endless, 32)
	if _, err := f.next(); !errors.Is(err, errFrameTooLarge) {
		t.Errorf("a line that never ends: %v", err)
	}
}

// neverEnds is a stream of spaces.
type neverEnds struct{}

func (neverEnds) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	return len(p), nil
}

func FuzzFrames(f *testing.F) {
	f.Add([]byte("{\"a\":1}\n[{\"b\":2}]\n{\"c\":\n3}\n"), uint8(3))
	f.Add([]byte("{\"a\":1} {\"b\":2}\r\n"), uint8(0))
	f.Fuzz(func(t *testing.T, stream []byte, chunk uint8) {
		sameFrames(t, stream, int(chunk))
	})
}

// BenchmarkFrames splits the messages of issue 42's path (benchLines) out
// of a stream, with frames and with the SDK's decoder.
func BenchmarkFrames(b *testing.B) {
	var stream []byte
	for range 64 {
		stream = append(append(stream, benchLines["request"]...), '\n')
		stream = append(append(stream, benchLines["response"]...), '\n')
	}
	b.Run("frames", func(b *testing.B) {
		for b.Loop() {
			if got, _ := readFrames(stream, 0, 0); len(got) != 128 {
				b.Fatal(len(got))
			}
		}
	})
	b.Run("decoder", func(b *testing.B) {
		for b.Loop() {
			if got, _ := decoderFrames(stream); len(got) != 128 {
				b.Fatal(len(got))
			}
		}
	})
}
