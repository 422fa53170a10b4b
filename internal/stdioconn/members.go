package stdioconn

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// decodeValid is decode for a message the reading goroutine's decoder has
// validated already: it finds the message's members in one pass over its
// bytes instead of decoding it into a map (two passes, one validating, and
// a copy of every member), the cost of each answer of a local server on the
// answer's path (docs/performance.md "pml stdio's first call"). A message it
// does not read that way (not an object, an escaped key, a member it would
// have to decode) goes to decode.
func decodeValid(data []byte) (jsonrpc.Message, error) {
	var version, id, method, params, result, rpcErr []byte
	var hasID, hasMethod, hasError bool
	ok := members(data, func(key, value []byte) bool {
		switch string(key) {
		case "jsonrpc":
			version = value
		case "id":
			id, hasID = value, true
		case "method":
			method, hasMethod = value, true
		case "params":
			params = value
		case "result":
			result = value
		case "error":
			rpcErr, hasError = value, true
		}
		return true
	})
	if !ok || !bytes.Equal(version, []byte(`"2.0"`)) {
		return decode(data)
	}
	var rawID any
	if hasID {
		if err := json.Unmarshal(id, &rawID); err != nil {
			return decode(data)
		}
	}
	msgID, err := jsonrpc.MakeID(rawID)
	if err != nil {
		return nil, err
	}
	if hasMethod {
		name, ok := plainString(method)
		if !ok {
			return decode(data)
		}
		return &jsonrpc.Request{Method: name, ID: msgID, Params: json.RawMessage(params)}, nil
	}
	if !msgID.IsValid() {
		return nil, errors.New("JSON RPC invalid request: a response without an id")
	}
	resp := &jsonrpc.Response{ID: msgID, Result: json.RawMessage(result)}
	if hasError {
		var werr *jsonrpc.Error
		if err := json.Unmarshal(rpcErr, &werr); err != nil {
			return decode(data)
		}
		if werr != nil { // a nil *Error in the interface would be a typed non-nil error
			resp.Error = werr
		}
	}
	return resp, nil
}

// plainString is the text of a JSON string without escapes.
func plainString(v []byte) (string, bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' || bytes.IndexByte(v, '\\') >= 0 {
		return "", false
	}
	return string(v[1 : len(v)-1]), true
}

// members calls f with the key and raw value of each member of the JSON
// object data, which must be valid JSON, in order, as long as f returns
// true. It reports false when data is not an object or a key holds an
// escape (whose text json.Unmarshal would unescape). A value is a slice
// of data, its bytes exactly, as json.RawMessage would hold them.
func members(data []byte, f func(key, value []byte) bool) bool {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return false
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return true
	}
	for i < len(data) {
		if data[i] != '"' {
			return false
		}
		end := stringEnd(data, i)
		if end < 0 {
			return false
		}
		key := data[i+1 : end-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			return false
		}
		i = skipSpace(data, end)
		if i >= len(data) || data[i] != ':' {
			return false
		}
		start := skipSpace(data, i+1)
		stop := valueEnd(data, start)
		if stop < 0 {
			return false
		}
		if !f(key, data[start:stop]) {
			return true
		}
		i = skipSpace(data, stop)
		if i >= len(data) {
			return false
		}
		switch data[i] {
		case '}':
			return true
		case ',':
			i = skipSpace(data, i+1)
		default:
			return false
		}
	}
	return false
}

func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

// stringEnd is the index after the string that starts at data[i], a quote;
// -1 when it does not end.
func stringEnd(data []byte, i int) int {
	for j := i + 1; j < len(data); j++ {
		switch data[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// valueEnd is the index after the value that starts at data[i]; -1 when it
// does not end.
func valueEnd(data []byte, i int) int {
	if i >= len(data) {
		return -1
	}
	switch data[i] {
	case '"':
		return stringEnd(data, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(data); j++ {
			switch data[j] {
			case '"':
				end := stringEnd(data, j)
				if end < 0 {
					return -1
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	default: // a number, true, false or null
		j := i
		for j < len(data) && data[j] != ',' && data[j] != '}' && data[j] != ']' &&
			data[j] != ' ' && data[j] != '\t' && data[j] != '\n' && data[j] != '\r' {
			j++
		}
		if j == i {
			return -1
		}
		return j
	}
}
