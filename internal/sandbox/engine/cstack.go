package engine

import (
	"reflect"

	"modernc.org/libc"
)

// cStacks recycles the engine's emulated C stacks (modernc's libc.TLS) of
// closed VMs. A TLS mallocs a block for each depth of C calls it reaches
// and keeps every one of them; a fresh VM with a fresh TLS allocated them
// all again in its first call into JS, from memory no cache had seen: a
// sixth of the time from the start of a run to its first mcp.* call
// (docs/performance.md "pml stdio's first call"). Like the arenas it is
// process-wide on purpose: it holds only idle stacks, the same for every
// VM, as the engine's stack checks count JS frames rather than read the C
// stack's addresses (maxStackSlots).
var cStacks = cStackPool{free: make(chan *libc.TLS, 16)}

type cStackPool struct{ free chan *libc.TLS }

// maxPooledBlocks bounds the stacks kept: a run's calls reach 20 to 40
// blocks of a few KiB, a recursion to maxStackSlots JS frames ~1,900
// blocks and 4 MiB, which a pooled stack would keep for good.
const maxPooledBlocks = 64

// get returns an idle stack, or a new one.
func (p *cStackPool) get() *libc.TLS {
	select {
	case t := <-p.free:
		return t
	default:
		return libc.NewTLS()
	}
}

// put takes back the stack of a VM no code runs in any more. The stack of a
// revoked VM, whose engine was stopped by a fault in the middle of its C
// calls, is closed instead, and so is one grown deep.
func (p *cStackPool) put(t *libc.TLS, revoked bool) {
	if n := stackBlocks(t); !revoked && n >= 0 && n <= maxPooledBlocks {
		select {
		case p.free <- t:
			return
		default:
		}
	}
	t.Close()
}

// tlsBlocks is the index of the field of libc.TLS that holds its stack's
// blocks on Linux, a slice; -1 where it keeps them otherwise (a list of
// pages, which frees all but a few as the calls return).
var tlsBlocks = func() int {
	f, ok := reflect.TypeFor[libc.TLS]().FieldByName("stack")
	if !ok || f.Type.Kind() != reflect.Slice || len(f.Index) != 1 {
		return -1
	}
	return f.Index[0]
}()

// stackBlocks is how many blocks t holds, or -1 when that cannot be read
// (then it is not pooled: a stack of unknown size could be a deep one).
func stackBlocks(t *libc.TLS) int {
	if tlsBlocks < 0 {
		return -1
	}
	return reflect.ValueOf(t).Elem().Field(tlsBlocks).Len()
}
