package approval

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pml-go/pml/internal/atomicfile"
)

// DepRecord is one MCP server installed on this machine with the user's approval.
type DepRecord struct {
	Name        string            `json:"name"`
	Version     string            `json:"version,omitempty"`
	Command     string            `json:"command"`
	Args        []string          `json:"args,omitempty"`
	Env         map[string]string `json:"env,omitempty"` // as configured; ${VAR}s resolve from the user's keys
	EnvRequired []string          `json:"envRequired,omitempty"`
	InstalledAt time.Time         `json:"installedAt"`
	Integrity   string            `json:"integrity,omitempty"`
}

// depsFile is the on-disk shape of .pml/deps.json; the version lets a later
// format change read old files.
type depsFile struct {
	Version   int                  `json:"version"`
	Installed map[string]DepRecord `json:"installed"`
}

const depsFileVersion = 1

// Deps is the record of installed dependencies in ${workspace}/.pml/deps.json,
// so an approved install is not asked about again.
type Deps struct {
	path string

	mu        sync.Mutex
	installed map[string]DepRecord
}

// OpenDeps reads the workspace's deps.json; a missing file is an empty record.
func OpenDeps(workspace string) (*Deps, error) {
	d := &Deps{path: filepath.Join(workspace, ".pml", "deps.json")}
	installed, err := d.read()
	if err != nil {
		return nil, err
	}
	d.installed = installed
	return d, nil
}

// Installed returns the record for name.
func (d *Deps) Installed(name string) (DepRecord, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	r, ok := d.installed[name]
	return r, ok
}

// List returns every installed dependency, sorted by name.
func (d *Deps) List() []DepRecord {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]DepRecord, 0, len(d.installed))
	for _, r := range d.installed {
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b DepRecord) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Record adds or replaces r and writes the file atomically (temp file and
// rename, so a crash never leaves half a file). It re-reads the file first so
// that records written meanwhile by another pml process of the workspace
// (pml stdio and pml serve side by side) are kept.
func (d *Deps) Record(r DepRecord) error {
	if r.Name == "" {
		return errors.New("record dependency: empty name")
	}
	if r.InstalledAt.IsZero() {
		r.InstalledAt = time.Now().UTC()
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	installed, err := d.read()
	if err != nil {
		return err
	}
	installed[r.Name] = r
	if err := d.write(installed); err != nil {
		return err
	}
	d.installed = installed
	return nil
}

func (d *Deps) read() (map[string]DepRecord, error) {
	data, err := os.ReadFile(d.path)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]DepRecord{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read deps: %w", err)
	}
	var f depsFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("parse %s: %w", d.path, err)
	}
	if f.Version > depsFileVersion {
		return nil, fmt.Errorf("parse %s: format version %d is newer than this pml understands (%d)", d.path, f.Version, depsFileVersion)
	}
	if f.Installed == nil {
		f.Installed = map[string]DepRecord{}
	}
	return f.Installed, nil
}

func (d *Deps) write(installed map[string]DepRecord) error {
	data, err := json.MarshalIndent(depsFile{Version: depsFileVersion, Installed: installed}, "", "  ")
	if err != nil {
		return fmt.Errorf("encode deps: %w", err)
	}
	if err := atomicfile.Write(d.path, append(data, '\n'), atomicfile.Durable); err != nil {
		return fmt.Errorf("write deps: %w", err)
	}
	return nil
}
