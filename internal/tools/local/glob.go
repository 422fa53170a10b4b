package local

import (
	"path"
	"strings"
)

// checkGlob reports a malformed pattern up front; path.Match only reports it
// when it reaches the bad part.
func checkGlob(pattern string) error {
	for _, seg := range strings.Split(pattern, "/") {
		if _, err := path.Match(seg, ""); err != nil {
			return err
		}
	}
	return nil
}

// matchGlob matches a pattern without '/' against name, and one with '/'
// against rel (slash-separated, relative to the search directory), where a
// "**" segment spans any number of directories.
func matchGlob(pattern, rel, name string) bool {
	if !strings.Contains(pattern, "/") {
		ok, _ := path.Match(pattern, name)
		return ok
	}
	return matchSegments(strings.Split(strings.Trim(pattern, "/"), "/"), strings.Split(rel, "/"))
}

func matchSegments(pat, parts []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for i := 0; i <= len(parts); i++ {
				if matchSegments(pat[1:], parts[i:]) {
					return true
				}
			}
			return false
		}
		if len(parts) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], parts[0]); !ok {
			return false
		}
		pat, parts = pat[1:], parts[1:]
	}
	return len(parts) == 0
}
