package workspace

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/pml-go/pml/internal/atomicfile"
	"github.com/pml-go/pml/internal/textcut"
	"github.com/pml-go/pml/internal/tools"
)

// serverRecord is what the package remembers of a local server across
// processes, in .pml/servers/NAME.json: when it last started and the tools
// it listed last. A server lives in the process that used it (`pml exec`,
// `pml stdio`); the page of `pml serve`, another process, would otherwise
// show a server used a minute ago as never used.
type serverRecord struct {
	StartedAt time.Time    `json:"started_at,omitzero"`
	ListedAt  time.Time    `json:"listed_at,omitzero"`
	Tools     []recordTool `json:"tools,omitempty"`
}

type recordTool struct {
	ID          string `json:"id"`
	Description string `json:"description,omitempty"`
}

// Bounds of a server record: it serves a catalog line per tool, whose
// description the page cuts far shorter.
const (
	maxRecordTools       = 1000
	maxRecordDescription = 1024
)

// serverRecordPath is the record of server name; the name is escaped, as
// .pml.json allows a '/' in it.
func (p *Workspace) serverRecordPath(name string) string {
	return filepath.Join(p.ws, StateDir, "servers", url.PathEscape(name)+".json")
}

// serverRecord reads the record of server name; ok is false when there is
// none (never started in this workspace) or it cannot be read.
func (p *Workspace) serverRecord(name string) (rec serverRecord, ok bool) {
	data, err := os.ReadFile(p.serverRecordPath(name))
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			p.log.Debug("reading a server record", "server", name, "err", err)
		}
		return rec, false
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		p.log.Debug("reading a server record", "server", name, "err", err)
		return rec, false
	}
	return rec, true
}

// noteServerStart records that server name started (upstream.Options.OnStart).
func (p *Workspace) noteServerStart(name string, _ bool) {
	p.updateServerRecord(name, func(rec *serverRecord) { rec.StartedAt = time.Now().UTC() })
}

// noteServerTools records the tools server name listed (upstream.Options.OnTools).
func (p *Workspace) noteServerTools(name string, list []tools.Info) {
	p.updateServerRecord(name, func(rec *serverRecord) {
		rec.ListedAt = time.Now().UTC()
		rec.Tools = make([]recordTool, 0, min(len(list), maxRecordTools))
		for _, t := range list[:min(len(list), maxRecordTools)] {
			rec.Tools = append(rec.Tools, recordTool{ID: t.ID, Description: textcut.Prefix(t.Description, maxRecordDescription)})
		}
	})
}

// updateServerRecord rewrites the record of server name with change. Two
// processes updating one server's record at once may lose one update: the
// record only informs the catalog, and the next start or listing writes it
// again.
func (p *Workspace) updateServerRecord(name string, change func(*serverRecord)) {
	p.recordMu.Lock()
	defer p.recordMu.Unlock()
	rec, _ := p.serverRecord(name)
	change(&rec)
	data, err := json.Marshal(rec)
	if err == nil {
		err = atomicfile.Write(p.serverRecordPath(name), data, atomicfile.Fast)
	}
	if err != nil {
		p.log.Debug("writing a server record", "server", name, "err", err)
	}
}

// recordedUse describes a server whose tools this process has not listed,
// from its record: the tools it listed last, or when it last started; ok is
// false when it never started in this workspace.
func (p *Workspace) recordedUse(name string) (desc string, known []tools.Info, ok bool) {
	rec, ok := p.serverRecord(name)
	switch {
	case !ok:
		return "", nil, false
	case !rec.ListedAt.IsZero():
		for _, t := range rec.Tools {
			known = append(known, tools.Info{ID: t.ID, Description: t.Description})
		}
		return fmt.Sprintf("%d tools, as it listed them on %s", len(rec.Tools), rec.ListedAt.Local().Format(time.DateTime)), known, true
	case !rec.StartedAt.IsZero():
		return fmt.Sprintf("last started on %s; discover lists its tools", rec.StartedAt.Local().Format(time.DateTime)), nil, true
	}
	return "", nil, false
}
