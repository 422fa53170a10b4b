package stdioconn

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"slices"

	"github.com/pml-go/pml/internal/rawjson"
)

// frames splits the stream into messages. MCP's stdio framing is one
// message per line, and a line that is one JSON object or array is taken
// as it is: found with a byte search and validated in one pass. The SDK's
// IOTransport reads with encoding/json's decoder instead, which scans each
// message twice and copies it through its own buffer; it also takes a
// message spread over lines and refuses two on one line. So that every
// stream reads as it reads there, the first line that is not a message of
// its own hands the rest of the stream, from that line on, to that decoder
// (docs/performance.md "JSON without reflection": a few percent of `pml
// stdio`'s CPU).
type frames struct {
	r     io.Reader
	limit int // the most bytes one message may take; 0: no bound

	buf        []byte
	start, end int // the bytes read and not yet taken: buf[start:end]
	eof        error

	dec *json.Decoder // once the stream is not one message per line
	lim *frameLimit   // the decoder's reader, bounded per message
}

// readChunk is how much frames asks the stream for at a time.
const readChunk = 32 << 10

func newFrames(r io.Reader, limit int) *frames {
	if limit < 0 {
		limit = 0
	}
	return &frames{r: r, limit: limit}
}

// next returns the next message, a copy its caller owns, or the error that
// ends the stream.
func (f *frames) next() (json.RawMessage, error) {
	if f.dec != nil {
		return f.decode()
	}
	for {
		rest := f.buf[f.start:f.end]
		nl := bytes.IndexByte(rest, '\n')
		if nl < 0 {
			if f.limit > 0 && len(bytes.TrimLeft(rest, " \t\r")) > f.limit {
				return nil, errFrameTooLarge
			}
			if f.eof != nil {
				if len(bytes.TrimLeft(rest, " \t\r")) == 0 {
					return nil, f.eof
				}
				return f.switchToDecoder()
			}
			f.fill()
			continue
		}
		line := bytes.TrimLeft(rest[:nl], " \t\r")
		line = bytes.TrimSuffix(line, []byte("\r"))
		if len(line) == 0 {
			f.start += nl + 1
			continue
		}
		if f.limit > 0 && len(line) > f.limit {
			return nil, errFrameTooLarge
		}
		if !wholeMessage(line) {
			return f.switchToDecoder()
		}
		f.start += nl + 1
		return bytes.Clone(line), nil
	}
}

// wholeMessage reports whether line is one JSON object or array and
// nothing else: what the decoder would read from it, followed by the end
// of the line.
func wholeMessage(line []byte) bool {
	first, last := line[0], line[len(line)-1]
	return (first == '{' && last == '}' || first == '[' && last == ']') && rawjson.Valid(line)
}

// fill reads more of the stream after the bytes not yet taken.
func (f *frames) fill() {
	if f.start > 0 {
		f.end = copy(f.buf, f.buf[f.start:f.end])
		f.start = 0
	}
	if len(f.buf)-f.end < readChunk/2 {
		f.buf = slices.Grow(f.buf[:f.end], readChunk)
		f.buf = f.buf[:cap(f.buf)]
	}
	n, err := f.r.Read(f.buf[f.end:])
	f.end += n
	if err != nil {
		f.eof = err
	}
}

// switchToDecoder reads the rest of the stream, from the bytes not yet
// taken, with encoding/json's decoder, as the SDK does.
func (f *frames) switchToDecoder() (json.RawMessage, error) {
	var r io.Reader = bytes.NewReader(bytes.Clone(f.buf[f.start:f.end]))
	if f.eof != nil {
		r = io.MultiReader(r, errReader{f.eof})
	} else {
		r = io.MultiReader(r, f.r)
	}
	f.buf, f.start, f.end = nil, 0, 0
	if f.limit > 0 {
		f.lim = &frameLimit{r: r, limit: f.limit}
		r = f.lim
	}
	f.dec = json.NewDecoder(r)
	return f.decode()
}

// decode reads one message with the decoder, and refuses a line that
// holds more than that message (the SDK's check).
func (f *frames) decode() (json.RawMessage, error) {
	if f.lim != nil {
		f.lim.count = 0
	}
	var raw json.RawMessage
	if err := f.dec.Decode(&raw); err != nil {
		return nil, err
	}
	// One message per line: the next byte read ahead, if any, ends the
	// line.
	var next [1]byte
	if n, err := f.dec.Buffered().Read(next[:]); n > 0 && next[0] != '\n' && next[0] != '\r' {
		return nil, errors.New("invalid trailing data at the end of stream")
	} else if err != nil && err != io.EOF {
		return nil, err
	}
	return raw, nil
}

// errReader is a stream that has ended with err.
type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

// errFrameTooLarge ends a connection whose peer sent a message over the
// bound.
var errFrameTooLarge = errors.New("inbound JSON-RPC frame exceeded the configured maximum line length")

// frameLimit bounds the bytes the decoder reads for one message.
type frameLimit struct {
	r            io.Reader
	limit, count int
}

func (f *frameLimit) Read(p []byte) (int, error) {
	if f.count >= f.limit {
		return 0, errFrameTooLarge
	}
	if len(p) > f.limit-f.count {
		p = p[:f.limit-f.count]
	}
	n, err := f.r.Read(p)
	f.count += n
	return n, err
}
