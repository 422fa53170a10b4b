package sandbox

import (
	_ "embed"
	"fmt"
	"sync"

	"github.com/pml-go/pml/internal/sandbox/engine"
)

//go:embed bridge.js
var bridgeSource string

// bridgeBytecode is bridge.js compiled once per process; loading bytecode
// costs a fraction of parsing the source in every VM. It is compiled
// without line tables and source: nothing reads them, as the bridge's
// frames are dropped from the positions reported to users.
var bridgeBytecode = sync.OnceValues(func() ([]byte, error) {
	vm, err := engine.New(DefaultLimits().MemoryBytes)
	if err != nil {
		return nil, fmt.Errorf("create a VM to compile the bridge: %w", err)
	}
	defer vm.Close()
	code, ok := vm.Compile(bridgeSource, true)
	if !ok {
		return nil, fmt.Errorf("compile bridge.js: %s", vm.TakeException(maxTextBytes).Message)
	}
	return code, nil
})

// machine is one VM with the bridge installed and no user code run yet. It
// is used for exactly one Run and then closed.
type machine struct {
	vm        *engine.VM
	controlFn engine.Value      // the bridge's control function
	waiting   map[int]resolvers // calls in flight by id (see jscalls.go)
	run       *run              // the Run using this machine; nil while pooled
}

// newMachine creates a VM whose heap can hold memoryLimit bytes and
// installs the bridge.
func newMachine(memoryLimit int64) (*machine, error) {
	code, err := bridgeBytecode()
	if err != nil {
		return nil, err
	}
	vm, err := engine.New(memoryLimit)
	if err != nil {
		return nil, fmt.Errorf("create VM: %w", err)
	}
	m := &machine{vm: vm, waiting: map[int]resolvers{}}
	if err := m.installHost(); err != nil {
		vm.Close()
		return nil, fmt.Errorf("install host function: %w", err)
	}
	if m.controlFn = vm.EvalBytecode(code); m.controlFn.IsException() {
		msg := vm.TakeException(maxTextBytes).Message
		vm.Close()
		return nil, fmt.Errorf("install bridge: %s", msg)
	}
	return m, nil
}

// fits reports whether the machine's heap can take a run with limit lim.
func (m *machine) fits(memoryLimit int64) bool { return m.vm.Fits(memoryLimit) }

// close drops the VM; its heap goes whole, values and all.
func (m *machine) close() { m.vm.Close() }
