package client

import (
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/pml-go/pml/internal/atomicfile"
)

// cacheEntry is one file of the disk cache: the last 200 answer for a
// four-part name.
type cacheEntry struct {
	FQDN    string `json:"fqdn"`
	ETag    string `json:"etag"`
	Type    string `json:"type"`
	Routing string `json:"routing"`
	Body    []byte `json:"body"`
}

// readCache returns the cached answer for a four-part name. A missing or
// unreadable file is no cache: the next fetch is a full one.
func (c *Client) readCache(base string) (cacheEntry, bool) {
	if c.cacheDir == "" {
		return cacheEntry{}, false
	}
	data, err := os.ReadFile(filepath.Join(c.cacheDir, base+".json"))
	if err != nil {
		return cacheEntry{}, false
	}
	var e cacheEntry
	if json.Unmarshal(data, &e) != nil || e.ETag == "" {
		return cacheEntry{}, false
	}
	return e, true
}

// writeCache replaces the cached answer for a four-part name (temp file and
// rename, so a concurrent reader sees the old or the new file). Failing to
// cache only costs a full fetch next time.
func (c *Client) writeCache(base string, e cacheEntry) {
	if c.cacheDir == "" {
		return
	}
	data, err := json.Marshal(e)
	if err != nil {
		return
	}
	_ = atomicfile.Write(filepath.Join(c.cacheDir, base+".json"), data, atomicfile.Fast) // a cache: losing a write costs a refetch
}
