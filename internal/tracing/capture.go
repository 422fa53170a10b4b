package tracing

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/pml-go/pml/internal/sanitize"
	"github.com/pml-go/pml/internal/textcut"
)

// maxRecordedPayload bounds the bytes of arguments and results one Recorder
// holds for its kept calls. Past it a value is kept as a marker with a
// preview window, and once even that does not fit, as a marker alone. The
// sanitizer's work on a trace, which is on the answer's path, is bounded by
// the same number (BenchmarkFinishLargestTrace).
const maxRecordedPayload = 256 << 10

// smallValue is the size under which a value is always kept whole: its
// marker would be as large.
const smallValue = 64

// previewWindow is how much of a cut value or text is kept before
// sanitizing: twice the preview, so the sanitizer can still recognise a
// secret that straddles the preview's end (Sanitizer.preview).
const previewWindow = 2 * PreviewBytes

// capture returns what c keeps of v, within the recorder's payload budget:
// a copy of v when it fits, else a truncation marker holding a prefix of v's
// text. It reads at most the bytes it keeps. Called with r.mu held.
func (r *Recorder) capture(c *call, v json.RawMessage) json.RawMessage {
	if v == nil {
		return nil
	}
	room := maxRecordedPayload - r.payload
	var out json.RawMessage
	if len(v) <= max(min(MaxValueBytes, room), smallValue) {
		out = json.RawMessage(strings.Clone(string(v)))
	} else if room > previewWindow {
		out = encode(truncationMarker(prefixText(v, previewWindow), len(v)))
	}
	if out == nil || len(out) > room {
		// Past the budget a value leaves only its size: a few dozen bytes
		// per kept call, whatever the run.
		out = json.RawMessage(`{"_truncated":true,"original_length":` + strconv.Itoa(len(v)) + `}`)
	}
	r.payload += len(out)
	c.bytes += len(out)
	return out
}

// The markers of a cut value or text: the sanitizer writes the same and
// recognises them (internal/sanitize).
var (
	truncationMarker = sanitize.TruncationMarker
	prefixText       = sanitize.PrefixText
	encode           = sanitize.Encode
)

const textMarkerPrefix = sanitize.TextMarkerPrefix

// cutText returns s when it has at most n bytes, else its first window bytes
// followed by the marker naming its length. The sanitizer re-cuts such a
// text to its preview (Sanitizer.String).
func cutText(s string, n, window int) string {
	if len(s) <= n {
		return s
	}
	return textcut.Prefix(s, window) + textMarkerPrefix + strconv.Itoa(len(s)) + "]"
}
