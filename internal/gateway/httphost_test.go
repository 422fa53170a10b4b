package gateway

import "testing"

func TestCheckPublicHost(t *testing.T) {
	for name, ok := range map[string]bool{
		"gateway.example.com": true, "gw": true, "10.0.0.5": true,
		"": false, "https://gateway.example.com": false, "gateway.example.com:443": false,
		"gateway.example.com/mcp": false, "user@gateway.example.com": false, "[::1]": false, "a b": false,
	} {
		if err := CheckPublicHost(name); (err == nil) != ok {
			t.Errorf("CheckPublicHost(%q) = %v, want ok %v", name, err, ok)
		}
	}
}
