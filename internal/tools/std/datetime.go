package std

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	_ "time/tzdata" // timezone names must work on gateways without system zoneinfo

	"github.com/pml-go/pml/internal/tools"
)

// isoLayout is JavaScript's Date.toISOString shape, with the zone kept.
const isoLayout = "2006-01-02T15:04:05.000Z07:00"

const timeDoc = `An ISO 8601 / RFC 3339 string ("2024-05-01T10:00:00Z", "2024-05-01"), another common date text, a number of milliseconds since the Unix epoch (like Date.now()), or "now".`

const tzDoc = `An IANA timezone name ("Europe/Paris", "UTC"); default UTC.`

func datetimeTools() []tools.Func {
	return []tools.Func{
		tools.Typed(info("datetime:now",
			"The current time as an ISO 8601 string (or in the given format).",
			`{"type":"object","properties":{
				"timezone":{"type":"string","description":`+quote(tzDoc)+`},
				"format":{"type":"string","description":`+quote(formatDoc)+`}
			},"additionalProperties":false}`, returnsTime),
			func(_ context.Context, a struct {
				Timezone string `json:"timezone"`
				Format   string `json:"format"`
			}) (any, error) {
				loc, err := location(a.Timezone)
				if err != nil {
					return nil, err
				}
				return formatTime(time.Now().In(loc), a.Format)
			}),
		tools.Typed(info("datetime:format",
			"Format a time. Named formats: iso (default), rfc1123, date, time, datetime, unix, unix_ms, kitchen; or a pattern with YYYY YY MMMM MMM MM M DD D dddd ddd HH H hh h mm m ss s SSS A a Z ZZ X x and [literal text].",
			`{"type":"object","properties":{
				"time":{"type":["string","number"],"description":`+quote(timeDoc)+`},
				"format":{"type":"string","description":`+quote(formatDoc)+`},
				"timezone":{"type":"string","description":`+quote(tzDoc+" The time is shown in this zone.")+`}
			},"required":["time"],"additionalProperties":false}`, returnsTime),
			func(_ context.Context, a struct {
				Time     any    `json:"time"`
				Format   string `json:"format"`
				Timezone string `json:"timezone"`
			}) (any, error) {
				loc, err := location(a.Timezone)
				if err != nil {
					return nil, err
				}
				t, err := toTime(a.Time, loc)
				if err != nil {
					return nil, err
				}
				if a.Timezone != "" {
					t = t.In(loc)
				}
				return formatTime(t, a.Format)
			}),
		tools.Typed(info("datetime:parse",
			"Parse a date text into an ISO 8601 string. Without format, common shapes are recognised (ISO 8601, RFC 1123, \"2024-05-01 10:00\", ...); with format, the text must match that pattern (same tokens as datetime:format).",
			`{"type":"object","properties":{
				"text":{"type":"string"},
				"format":{"type":"string","description":"A pattern such as \"DD/MM/YYYY HH:mm\"."},
				"timezone":{"type":"string","description":`+quote("Zone for texts without an offset. "+tzDoc)+`}
			},"required":["text"],"additionalProperties":false}`, returnsString),
			func(_ context.Context, a struct {
				Text     string `json:"text"`
				Format   string `json:"format"`
				Timezone string `json:"timezone"`
			}) (any, error) {
				loc, err := location(a.Timezone)
				if err != nil {
					return nil, err
				}
				var t time.Time
				if a.Format != "" {
					t, err = time.ParseInLocation(patternLayout(a.Format), strings.TrimSpace(a.Text), loc)
					if err != nil {
						return nil, fmt.Errorf("text %q does not match format %q: %w", a.Text, a.Format, err)
					}
				} else if t, err = parseText(a.Text, loc); err != nil {
					return nil, err
				}
				return t.Format(isoLayout), nil
			}),
		tools.Typed(info("datetime:add",
			"Add an amount of time to a time (negative amounts subtract) and return an ISO 8601 string in the time's own offset. Months and years follow the calendar (Jan 31 + 1 month = Mar 2 or 3, as in JavaScript).",
			`{"type":"object","properties":{
				"time":{"type":["string","number"],"description":`+quote(timeDoc)+`},
				"years":{"type":"integer"},
				"months":{"type":"integer"},
				"days":{"type":"integer"},
				"hours":{"type":"number"},
				"minutes":{"type":"number"},
				"seconds":{"type":"number"},
				"milliseconds":{"type":"number"}
			},"required":["time"],"additionalProperties":false}`, returnsString),
			func(_ context.Context, a struct {
				Time         any     `json:"time"`
				Years        int     `json:"years"`
				Months       int     `json:"months"`
				Days         int     `json:"days"`
				Hours        float64 `json:"hours"`
				Minutes      float64 `json:"minutes"`
				Seconds      float64 `json:"seconds"`
				Milliseconds float64 `json:"milliseconds"`
			}) (any, error) {
				t, err := toTime(a.Time, time.UTC)
				if err != nil {
					return nil, err
				}
				d := a.Hours*float64(time.Hour) + a.Minutes*float64(time.Minute) +
					a.Seconds*float64(time.Second) + a.Milliseconds*float64(time.Millisecond)
				return t.AddDate(a.Years, a.Months, a.Days).Add(time.Duration(d)).Format(isoLayout), nil
			}),
		tools.Typed(info("datetime:diff",
			"The time from `from` to `to` (positive when to is later), in a unit: milliseconds (default), seconds, minutes, hours, days or weeks; fractional.",
			`{"type":"object","properties":{
				"from":{"type":["string","number"]},
				"to":{"type":["string","number"]},
				"unit":{"enum":["milliseconds","seconds","minutes","hours","days","weeks"],"default":"milliseconds"}
			},"required":["from","to"],"additionalProperties":false}`, returnsNumber),
			func(_ context.Context, a struct {
				From any    `json:"from"`
				To   any    `json:"to"`
				Unit string `json:"unit"`
			}) (any, error) {
				from, err := toTime(a.From, time.UTC)
				if err != nil {
					return nil, fmt.Errorf("from: %w", err)
				}
				to, err := toTime(a.To, time.UTC)
				if err != nil {
					return nil, fmt.Errorf("to: %w", err)
				}
				d := to.Sub(from)
				units := map[string]time.Duration{
					"": time.Millisecond, "milliseconds": time.Millisecond, "seconds": time.Second,
					"minutes": time.Minute, "hours": time.Hour, "days": 24 * time.Hour, "weeks": 7 * 24 * time.Hour,
				}
				return float64(d) / float64(units[a.Unit]), nil
			}),
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func location(name string) (*time.Location, error) {
	if name == "" {
		return time.UTC, nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("unknown timezone %q", name)
	}
	return loc, nil
}

// toTime accepts a date text or epoch milliseconds (json.Number); loc is the
// zone of texts that carry no offset.
func toTime(v any, loc *time.Location) (time.Time, error) {
	switch x := v.(type) {
	case json.Number:
		ms, err := x.Float64()
		if err != nil {
			return time.Time{}, fmt.Errorf("time %s is not a number of milliseconds", x)
		}
		return time.UnixMilli(int64(ms)).In(loc), nil
	case string:
		return parseText(x, loc)
	}
	return time.Time{}, fmt.Errorf("time must be a string or a number, got %T", v)
}

// textLayouts are tried in order by parseText.
var textLayouts = []string{
	time.RFC3339Nano, "2006-01-02T15:04:05Z0700", "2006-01-02T15:04:05", "2006-01-02T15:04",
	"2006-01-02 15:04:05Z07:00", "2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02",
	time.RFC1123, time.RFC1123Z, time.RFC850, time.RFC822, time.RFC822Z, time.ANSIC, time.UnixDate,
	"Jan 2, 2006", "January 2, 2006", "2 Jan 2006", "2 January 2006", "Jan 2 2006 15:04:05",
	"2006/01/02", "2006/01/02 15:04:05",
}

func parseText(s string, loc *time.Location) (time.Time, error) {
	s = strings.TrimSpace(s)
	if strings.EqualFold(s, "now") {
		return time.Now().In(loc), nil
	}
	for _, layout := range textLayouts {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("cannot read %q as a time; use ISO 8601 such as 2024-05-01T10:00:00Z, or give a format", s)
}
