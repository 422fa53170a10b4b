package stdioconn

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/pml-go/pml/internal/rawjson"
)

// decodeValid is decode for a message the reading goroutine's decoder has
// validated already (frames): it finds the message's members in one pass over its
// bytes instead of decoding it into a map (two passes, one validating, and
// a copy of every member), the cost of each answer of a local server on the
// answer's path (docs/performance.md "pml stdio's first call"). A message it
// does not read that way (not an object, an escaped key, a member it would
// have to decode) goes to decode.
func decodeValid(data []byte) (jsonrpc.Message, error) {
	var version, id, method, params, result, rpcErr []byte
	var hasID, hasMethod, hasError bool
	ok := rawjson.Members(data, func(key, value []byte) bool {
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
		if rawID, ok = plainID(id); !ok && json.Unmarshal(id, &rawID) != nil {
			return decode(data)
		}
	}
	msgID, err := jsonrpc.MakeID(rawID)
	if err != nil {
		return nil, err
	}
	if hasMethod {
		name, ok := rawjson.PlainString(method)
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

// plainID is an id as json.Unmarshal decodes it into an any, for the ids
// peers send: a string without escapes, or an integer up to 2^53 (as a
// float64, which holds it exactly; Call's own ids are above 2^52).
// Anything else is false.
func plainID(v []byte) (any, bool) {
	if s, ok := rawjson.PlainString(v); ok {
		return s, true
	}
	if len(v) == 0 || len(v) > 16 || (v[0] == '0' && len(v) > 1) {
		return nil, false
	}
	var n uint64
	for _, c := range v {
		if c < '0' || c > '9' {
			return nil, false
		}
		n = n*10 + uint64(c-'0')
	}
	if n > 1<<53 {
		return nil, false
	}
	return float64(n), true
}
