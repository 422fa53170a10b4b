//go:build !linux

package stdioorder

import "os"

// unreadFunc cannot see the reader's progress here: a message after a
// progress notification is paused briefly instead.
func unreadFunc(*os.File) func() (int, bool) { return unknown }

func unknown() (int, bool) { return 0, false }
