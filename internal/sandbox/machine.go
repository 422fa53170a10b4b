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

// machineTemplate is a VM with the host functions and the bridge installed,
// made once per process; machines are copies of it (docs/performance.md
// "VM templates"), which costs a fraction of building each.
var machineTemplate = sync.OnceValues(func() (*engine.Template, error) {
	return engine.NewTemplate(DefaultLimits().MemoryBytes, func(vm *engine.VM) ([]engine.Value, error) {
		controlFn, err := setUp(vm, nil)
		return []engine.Value{controlFn}, err
	})
})

// newMachine creates a VM whose heap can hold memoryLimit bytes, with the
// bridge installed: a copy of machineTemplate, or, should the engine's heap
// not be copyable, built.
func newMachine(memoryLimit int64) (*machine, error) {
	m := &machine{waiting: map[int]resolvers{}}
	if tpl, err := machineTemplate(); err == nil {
		vm, kept, err := tpl.Clone(memoryLimit, m.host)
		if err != nil {
			return nil, fmt.Errorf("create VM: %w", err)
		}
		m.vm, m.controlFn = vm, kept[0]
		return m, nil
	}
	vm, err := engine.New(memoryLimit)
	if err != nil {
		return nil, fmt.Errorf("create VM: %w", err)
	}
	if m.controlFn, err = setUp(vm, m.host); err != nil {
		vm.Close()
		return nil, err
	}
	m.vm = vm
	return m, nil
}

// setUp installs the host functions, calling host, and the bridge in a new
// VM, and returns the bridge's control function.
func setUp(vm *engine.VM, host engine.HostFunc) (engine.Value, error) {
	code, err := bridgeBytecode()
	if err != nil {
		return engine.Undefined, err
	}
	if err := installHost(vm, host); err != nil {
		return engine.Undefined, fmt.Errorf("install host function: %w", err)
	}
	controlFn := vm.EvalBytecode(code)
	if controlFn.IsException() {
		return engine.Undefined, fmt.Errorf("install bridge: %s", vm.TakeException(maxTextBytes).Message)
	}
	return controlFn, nil
}

// host serves the VM's host function for the run using the machine.
func (m *machine) host(op int, a, b engine.Value) engine.Value {
	if m.run == nil {
		return engine.Int(-1)
	}
	return m.run.host(op, a, b)
}

// fits reports whether the machine's heap can take a run with limit lim.
func (m *machine) fits(memoryLimit int64) bool { return m.vm.Fits(memoryLimit) }

// close drops the VM; its heap goes whole, values and all.
func (m *machine) close() { m.vm.Close() }
