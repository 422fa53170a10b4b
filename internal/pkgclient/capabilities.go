package pkgclient

import (
	"context"
	"encoding/json"
)

// callCapability runs tool when it names a learned capability; ok is false
// when it does not.
func (p *Package) callCapability(ctx context.Context, tool string, args json.RawMessage) (out json.RawMessage, ok bool, err error) {
	return nil, false, nil
}
