package std

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

const formatDoc = "iso (default), rfc1123, date, time, datetime, unix, unix_ms, kitchen, or a pattern like \"YYYY-MM-DD HH:mm\"."

// namedFormats are whole-format names; unix ones yield numbers.
var namedFormats = map[string]string{
	"iso": isoLayout, "rfc3339": isoLayout, "rfc1123": time.RFC1123, "date": "2006-01-02",
	"time": "15:04:05", "datetime": "2006-01-02 15:04:05", "kitchen": time.Kitchen,
}

// patternTokens maps pattern tokens (moment.js / day.js style) to Go layout
// elements, longest first so "MMMM" wins over "MM".
var patternTokens = []struct{ token, layout string }{
	{"YYYY", "2006"}, {"MMMM", "January"}, {"dddd", "Monday"},
	{"MMM", "Jan"}, {"ddd", "Mon"}, {"SSS", "000"},
	{"YY", "06"}, {"MM", "01"}, {"DD", "02"}, {"HH", "15"}, {"hh", "03"}, {"mm", "04"}, {"ss", "05"}, {"ZZ", "-0700"},
	{"M", "1"}, {"D", "2"}, {"H", "15"}, {"h", "3"}, {"m", "4"}, {"s", "5"}, {"A", "PM"}, {"a", "pm"}, {"Z", "-07:00"},
	{"X", ""}, {"x", ""},
}

// formatTime renders t in a named format or a token pattern. Patterns are
// rendered token by token, so literal text never collides with Go's layout
// reference values.
func formatTime(t time.Time, format string) (any, error) {
	switch strings.ToLower(format) {
	case "":
		return t.Format(isoLayout), nil
	case "unix":
		return t.Unix(), nil
	case "unix_ms":
		return t.UnixMilli(), nil
	}
	if layout, ok := namedFormats[strings.ToLower(format)]; ok {
		return t.Format(layout), nil
	}
	var b strings.Builder
	for i := 0; i < len(format); {
		if format[i] == '[' {
			end := strings.IndexByte(format[i:], ']')
			if end < 0 {
				return nil, fmt.Errorf("format %q: unclosed '['", format)
			}
			b.WriteString(format[i+1 : i+end])
			i += end + 1
			continue
		}
		tok, layout, ok := matchToken(format[i:])
		if !ok {
			b.WriteByte(format[i])
			i++
			continue
		}
		switch tok {
		case "H":
			b.WriteString(strconv.Itoa(t.Hour()))
		case "SSS":
			fmt.Fprintf(&b, "%03d", t.Nanosecond()/int(time.Millisecond))
		case "X":
			b.WriteString(strconv.FormatInt(t.Unix(), 10))
		case "x":
			b.WriteString(strconv.FormatInt(t.UnixMilli(), 10))
		default:
			b.WriteString(t.Format(layout))
		}
		i += len(tok)
	}
	return b.String(), nil
}

func matchToken(s string) (token, layout string, ok bool) {
	for _, pt := range patternTokens {
		if strings.HasPrefix(s, pt.token) {
			return pt.token, pt.layout, true
		}
	}
	return "", "", false
}

// patternLayout converts a token pattern into a Go layout for parsing.
// Literal text containing Go reference values ("1", "Jan", "PM") may be
// misread; parsing is best effort beyond the documented tokens.
func patternLayout(format string) string {
	if layout, ok := namedFormats[strings.ToLower(format)]; ok {
		return layout
	}
	var b strings.Builder
	for i := 0; i < len(format); {
		if format[i] == '[' {
			if end := strings.IndexByte(format[i:], ']'); end > 0 {
				b.WriteString(format[i+1 : i+end])
				i += end + 1
				continue
			}
		}
		tok, layout, ok := matchToken(format[i:])
		if !ok || layout == "" {
			b.WriteByte(format[i])
			i++
			continue
		}
		b.WriteString(layout)
		i += len(tok)
	}
	return b.String()
}
