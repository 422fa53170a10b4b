package sandbox

import (
	_ "embed"
	"fmt"
	"sync"

	lib "modernc.org/libquickjs"
	"modernc.org/quickjs"
)

//go:embed bridge.js
var bridgeSource string

// bridgeBytecode is bridge.js compiled once per process; loading bytecode
// costs a fraction of parsing the source in every VM.
var bridgeBytecode = sync.OnceValues(func() ([]byte, error) {
	vm, err := quickjs.NewVM()
	if err != nil {
		return nil, fmt.Errorf("create a VM to compile the bridge: %w", err)
	}
	defer vm.Close()
	// Without line tables and source text the bytecode is a third of the
	// size and loads in half the time, in every VM. Nothing reads them: the
	// bridge's frames are dropped from the positions reported to users.
	rt, err := runtimeOf(vm)
	if err != nil {
		return nil, err
	}
	rt.Fstrip_flags = lib.MJS_STRIP_SOURCE | lib.MJS_STRIP_DEBUG // JS_SetStripInfo
	b, err := vm.Compile(bridgeSource, quickjs.EvalGlobal)
	if err != nil {
		return nil, fmt.Errorf("compile bridge.js: %w", err)
	}
	return b, nil
})

// maxStackSlots bounds JS recursion: about one slot per JS call, a few per
// level through built-ins. Each slot costs about 1 KiB of goroutine stack in
// the transpiled engine, so 2000 keeps a runaway recursion near 2 MiB of Go
// stack (the engine default of 5000 reaches 8 MiB) while allowing ~2000
// levels of JS recursion and JSON nesting.
const maxStackSlots = 2000

// machine is one VM with the bridge installed and no user code run yet. It
// is used for exactly one Run and then closed.
type machine struct {
	vm        *quickjs.VM
	engine    engine
	control   quickjs.Value     // the bridge's control function
	controlFn lib.TJSValue      // the same, as the engine's value
	waiting   map[int]resolvers // calls in flight by id (see jscalls.go)
	run       *run              // the Run using this machine; nil while pooled
}

// newMachine creates a VM and installs the bridge.
func newMachine() (*machine, error) {
	code, err := bridgeBytecode()
	if err != nil {
		return nil, err
	}
	vm, err := quickjs.NewVM()
	if err != nil {
		return nil, fmt.Errorf("create VM: %w", err)
	}
	m := &machine{vm: vm, waiting: map[int]resolvers{}}
	ok := false
	defer func() {
		if !ok {
			m.engine.freeScratch()
			vm.Close()
		}
	}()
	if m.engine, err = hookEngine(vm); err != nil {
		return nil, fmt.Errorf("hook engine: %w", err)
	}
	vm.SetMaxStackSize(maxStackSlots)
	if err := m.installHost(); err != nil {
		return nil, fmt.Errorf("install host function: %w", err)
	}
	if m.control, err = vm.EvalBytecodeValue(code); err != nil {
		return nil, fmt.Errorf("install bridge: %w", err)
	}
	if m.controlFn, err = engineValue(&m.control); err != nil {
		return nil, err
	}
	ok = true
	return m, nil
}

func (m *machine) close() {
	for _, res := range m.waiting {
		res.free(&m.engine)
	}
	clear(m.waiting)
	if m.control.VM() != nil {
		m.control.Free()
	}
	m.engine.freeScratch()
	m.vm.Close()
}
