package local

import (
	"fmt"
	"io/fs"
	"os"

	"golang.org/x/sys/windows"
)

// linkCount is the number of names of the opened file f. Windows' file info
// (fi.Sys()) holds no link count; the handle's BY_HANDLE_FILE_INFORMATION
// does, NTFS hard links included.
func linkCount(f *os.File, _ fs.FileInfo) (uint64, error) {
	var info windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(windows.Handle(f.Fd()), &info); err != nil {
		return 0, fmt.Errorf("file information: %w", err)
	}
	return uint64(info.NumberOfLinks), nil
}
